//===- CurrentCall.h - The call of generated code on a thread --*- C++ -*-===//
//
// One object per call of generated code, on the host and on CUDA alike: the
// context and entry it runs, whether it failed (the first status and message
// are kept), the device stream where there is one, and what services keep
// for the call. A service fails a call in the way its family says
// (grove/services.def):
//  * RECORDS: fail() records the error and the code goes on; the call
//    returns it at its end and writes no state (grove_rt_call_failed).
//  * ABANDONS: abandon() records it and leaves the call at once, through
//    the longjmp of run() (Memory.h).
// Services that must act when every call begins or ends (collectives left
// in flight) register hooks (addCallHooks), so that grove_invoke and the
// device context name no service.
//
// Errors reported where no call is current (the communicator's worker
// thread, the public collectives API, team threads of a parallel region)
// go to a slot of the thread with the same first-kept rule
// (reportServiceError, Error.h). Errors on the team threads of
// grove_rt_parallel_for reach the call that runs the loop (Parallel.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_CURRENTCALL_H
#define GROVE_RT_CURRENTCALL_H

#include "grove/runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct grove_context;

namespace grove::rt {

class CurrentCall;

/// What a service keeps for one call (the collectives it started), made
/// on first use (CurrentCall::state) and destroyed when the call ends,
/// after the end hooks.
class CallState {
public:
  virtual ~CallState() = default;
};

/// What a service does when every call begins and ends (and before its
/// state writes). `begin` runs after
/// the device context's beginCall; `end` runs for abandoned calls too,
/// before the device context's endCall (which waits for the stream), while
/// the call is still current. Either may be null.
struct CallHooks {
  void (*begin)(CurrentCall &call) = nullptr;
  void (*end)(CurrentCall &call, bool abandoned) = nullptr;
  /// Runs when the generated code asks whether the call failed, just
  /// before its state writes (grove_rt_call_failed): a failure recorded
  /// here still keeps them from running.
  void (*beforeWrites)(CurrentCall &call) = nullptr;
};

/// Adds `hooks` for every call that begins afterwards; end hooks run in the
/// reverse order. Meant for static initialisation where the service is
/// defined (then no call runs yet); returns true for that:
///   [[maybe_unused]] const bool kHooks = addCallHooks({...});
bool addCallHooks(CallHooks hooks);

/// The first failure of a call, or of a thread outside calls.
struct Failure {
  bool failed = false;
  grove_status status = GROVE_OK;
  std::string message;

  /// Keeps the first failure only. Never throws: a message that cannot be
  /// stored is left empty (the status still says what failed).
  void record(grove_status s, const char *text) noexcept;
  /// True (and `text`, `s` set) if failed; clears it.
  bool take(std::string &text, grove_status &s);
  void clear() noexcept;
};

/// A call of generated code on this thread. Making one makes it current
/// (calls nest: the outer one is current again when this one ends) and
/// begins it: the device context's beginCall, then the begin hooks.
class CurrentCall {
public:
  CurrentCall(grove_context &ctx, uint32_t entry);
  /// Ends the call (end()) unless that was done.
  ~CurrentCall();
  CurrentCall(const CurrentCall &) = delete;
  CurrentCall &operator=(const CurrentCall &) = delete;

  grove_context &context() const { return *ctx_; }
  uint32_t entry() const { return entry_; }
  /// The device stream the call's work goes to (a CUstream for a CUDA
  /// context), or null for a host context.
  void *stream() const;

  bool failed() const { return failure_.failed; }
  /// The first failure's status (GROVE_OK before one) and message.
  grove_status status() const { return failure_.status; }
  const std::string &message() const { return failure_.message; }

  /// Records a failure (the first one is kept); the call goes on.
  void fail(grove_status status, const char *message) noexcept;
  void fail(grove_status status, const std::string &message) noexcept {
    fail(status, message.c_str());
  }
  /// Records a failure as fail() does and leaves the call at once (with no
  /// arguments: the failure is recorded already). Returns only where the
  /// call cannot be left: outside run() or inside a parallel region.
  /// Nothing with a destructor may be live in the caller's frame.
  void abandon(grove_status status, const char *message) noexcept;
  void abandon() noexcept;
  /// Whether run() was left by abandon().
  bool abandoned() const { return abandoned_; }

  /// Runs generated code `fn(args)` as this call (runAbandonable): false
  /// if it was abandoned.
  bool run(void (*fn)(void **), void **args);

  /// The state that the service of `key` keeps for this call, made on
  /// first use (may throw std::bad_alloc).
  template <typename T> T &state(const void *key) {
    if (CallState *found = findState(key))
      return static_cast<T &>(*found);
    auto made = std::make_unique<T>();
    T &result = *made;
    states_.emplace_back(key, std::move(made));
    return result;
  }
  /// The state of `key`, or null when the service made none.
  CallState *findState(const void *key) const;

  /// Ends the call: the end hooks, the device context's endCall (which may
  /// record a failure), then its state goes. The call stays current until
  /// it is destroyed, so that its failure can still be taken.
  void end();
  /// Runs the hooks' beforeWrites (grove_rt_call_failed).
  void beforeWrites();
  /// True (and `message`, `status` set) if the call failed; clears it.
  bool takeFailure(std::string &message, grove_status &status) {
    return failure_.take(message, status);
  }
  /// Forgets the failure (Error.h's clearServiceError inside a call).
  void clearFailure() noexcept { failure_.clear(); }

private:
  grove_context *ctx_;
  uint32_t entry_;
  CurrentCall *outer_;
  Failure failure_;
  bool abandoned_ = false;
  bool ended_ = false;
  std::vector<std::pair<const void *, std::unique_ptr<CallState>>> states_;
};

/// The call on this thread; null outside calls and on the team threads of
/// a parallel region.
CurrentCall *currentCall();

/// This thread's failure outside calls (see above).
Failure &threadFailure();

} // namespace grove::rt

#endif // GROVE_RT_CURRENTCALL_H
