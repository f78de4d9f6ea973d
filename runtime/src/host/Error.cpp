//===- Error.cpp - Thread-local error reporting ---------------------------===//

#include "Error.h"

#include "CurrentCall.h"

#include <cstring>

namespace grove::rt {
namespace {
thread_local std::string lastError;

void store(std::string &slot, const char *message) noexcept {
  try {
    slot.assign(message ? message : "");
  } catch (...) {
    // Keep going with a shorter text; an allocation failure while reporting an
    // error must not turn into a crash.
    slot.clear();
  }
}
} // namespace

grove_status fail(grove_status status, const std::string &message) noexcept {
  store(lastError, message.c_str());
  if (lastError.empty())
    store(lastError, grove_status_string(status));
  return status;
}

grove_status fail(grove_status status, const char *message) noexcept {
  store(lastError, message);
  if (lastError.empty())
    store(lastError, grove_status_string(status));
  return status;
}

void reportServiceError(const char *message, grove_status status) noexcept {
  if (CurrentCall *call = currentCall())
    return call->fail(status, message);
  threadFailure().record(status, message);
}

bool serviceErrorPending() noexcept {
  if (CurrentCall *call = currentCall())
    return call->failed();
  return threadFailure().failed;
}

void clearServiceError() noexcept {
  if (CurrentCall *call = currentCall())
    return call->clearFailure();
  threadFailure().clear();
}

bool takeServiceError(std::string &message, grove_status &status) {
  if (CurrentCall *call = currentCall())
    return call->takeFailure(message, status);
  return threadFailure().take(message, status);
}

std::string quote(const char *s) {
  if (!s)
    return "(null)";
  return "'" + std::string(s) + "'";
}

} // namespace grove::rt

using namespace grove::rt;

extern "C" GROVE_API const char *grove_status_string(grove_status status) {
  // C callers may pass any int; read it as one so that C++ never loads an
  // out-of-range enum value.
  int raw = 0;
  static_assert(sizeof(raw) == sizeof(status), "grove_status is an int");
  std::memcpy(&raw, &status, sizeof(raw));
  switch (raw) {
  case GROVE_OK:
    return "GROVE_OK";
  case GROVE_ERROR_INVALID_ARGUMENT:
    return "GROVE_ERROR_INVALID_ARGUMENT";
  case GROVE_ERROR_IO:
    return "GROVE_ERROR_IO";
  case GROVE_ERROR_BAD_WEIGHTS:
    return "GROVE_ERROR_BAD_WEIGHTS";
  case GROVE_ERROR_OUT_OF_MEMORY:
    return "GROVE_ERROR_OUT_OF_MEMORY";
  case GROVE_ERROR_UNSUPPORTED:
    return "GROVE_ERROR_UNSUPPORTED";
  case GROVE_ERROR_ABI_MISMATCH:
    return "GROVE_ERROR_ABI_MISMATCH";
  case GROVE_ERROR_NO_DEVICE:
    return "GROVE_ERROR_NO_DEVICE";
  case GROVE_ERROR_INTERNAL:
    return "GROVE_ERROR_INTERNAL";
  case GROVE_ERROR_PEER:
    return "GROVE_ERROR_PEER";
  }
  return "GROVE_ERROR_UNKNOWN";
}

extern "C" GROVE_API const char *grove_last_error(void) {
  return lastError.c_str();
}

extern "C" GROVE_API void grove_rt_size_below(int64_t least, int64_t got,
                                              const char *what) {
  char message[512];
  std::snprintf(message, sizeof(message), "%s of at least %lld, got %lld",
                what ? what : "(unknown)", static_cast<long long>(least),
                static_cast<long long>(got));
  grove::rt::reportServiceError(message, GROVE_ERROR_INVALID_ARGUMENT);
}

extern "C" GROVE_API void grove_rt_dim_mismatch(int64_t a, int64_t b,
                                                const char *what) {
  char message[512];
  std::snprintf(message, sizeof(message),
                "dynamic sizes must agree: %s (got %lld and %lld)",
                what ? what : "(unknown)", static_cast<long long>(a),
                static_cast<long long>(b));
  grove::rt::reportServiceError(message, GROVE_ERROR_INVALID_ARGUMENT);
}

extern "C" GROVE_API int32_t grove_rt_call_failed(void) {
  if (grove::rt::CurrentCall *call = grove::rt::currentCall())
    call->beforeWrites();
  return grove::rt::serviceErrorPending() ? 1 : 0;
}
