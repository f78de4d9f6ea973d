//===- Error.h - Thread-local error reporting ------------------*- C++ -*-===//
//
// Every failing public function records a message here and returns a status;
// grove_last_error() reads it back. Runtime services called from generated
// code (which cannot return a status) fail the current call instead
// (CurrentCall.h), which grove_invoke then returns.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_ERROR_H
#define GROVE_RT_ERROR_H

#include "grove/runtime.h"

#include <cstdio>
#include <new>
#include <string>

namespace grove::rt {

/// Records `message` as this thread's last error and returns `status`, so that
/// callers can write `return fail(GROVE_ERROR_IO, "...")`. Never throws: if the
/// message cannot be stored, a fixed fallback text is kept instead.
grove_status fail(grove_status status, const std::string &message) noexcept;
grove_status fail(grove_status status, const char *message) noexcept;

/// Called by host services (BLAS, ...) on bad arguments from generated code,
/// or (with GROVE_ERROR_INVALID_ARGUMENT) by generated shape checks: fails
/// the current call (CurrentCall.h), or outside calls this thread's
/// failure. Only the first report is kept.
void reportServiceError(const char *message,
                        grove_status status = GROVE_ERROR_INTERNAL) noexcept;
/// These three act on the same object: the current call's failure, or
/// outside calls this thread's.
void clearServiceError() noexcept;
/// Whether a service error is pending (grove_rt_call_failed).
bool serviceErrorPending() noexcept;
/// True (and `message`, `status` filled) if a service error is pending;
/// clears it.
bool takeServiceError(std::string &message, grove_status &status);

/// Runs `body` (returning grove_status) and converts any escaping C++
/// exception into a status, so that no exception crosses the C API.
template <typename Fn>
grove_status guarded(const char *function, Fn &&body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    // No std::string here: allocating while out of memory would throw again.
    char message[160];
    std::snprintf(message, sizeof(message), "%s: out of memory", function);
    return fail(GROVE_ERROR_OUT_OF_MEMORY, message);
  } catch (...) {
    char message[160];
    std::snprintf(message, sizeof(message), "%s: unexpected internal exception",
                  function);
    return fail(GROVE_ERROR_INTERNAL, message);
  }
}

/// Quotes a possibly-NULL C string for messages.
std::string quote(const char *s);

} // namespace grove::rt

#endif // GROVE_RT_ERROR_H
