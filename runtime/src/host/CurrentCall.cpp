//===- CurrentCall.cpp - The call of generated code on a thread -----------===//

#include "CurrentCall.h"

#include "Context.h"
#include "Device.h"
#include "Memory.h"

#include <algorithm>

namespace grove::rt {
namespace {
thread_local CurrentCall *tlsCall = nullptr;

/// The hooks of every service, in the order they were added. Made on first
/// use: services add theirs during static initialisation, in any order.
std::vector<CallHooks> &hooks() {
  static std::vector<CallHooks> all;
  return all;
}
} // namespace

bool addCallHooks(CallHooks added) {
  hooks().push_back(added);
  return true;
}

void Failure::record(grove_status s, const char *text) noexcept {
  if (failed)
    return;
  failed = true;
  status = s;
  try {
    message.assign(text ? text : "");
  } catch (...) {
    // Out of memory while reporting: the status alone must still get out.
    message.clear();
  }
}

bool Failure::take(std::string &text, grove_status &s) {
  if (!failed)
    return false;
  text = message;
  s = status;
  clear();
  return true;
}

void Failure::clear() noexcept {
  failed = false;
  status = GROVE_OK;
  message.clear();
}

Failure &threadFailure() {
  thread_local Failure failure;
  return failure;
}

CurrentCall *currentCall() { return tlsCall; }

CurrentCall::CurrentCall(grove_context &ctx, uint32_t entry)
    : ctx_(&ctx), entry_(entry), outer_(tlsCall) {
  // What this thread reported outside calls is no part of this one; it is
  // dropped here as the one pending error of the thread always was.
  threadFailure().clear();
  tlsCall = this;
  if (ctx.device)
    ctx.device->beginCall();
  for (const CallHooks &h : hooks())
    if (h.begin)
      h.begin(*this);
}

CurrentCall::~CurrentCall() {
  end();
  tlsCall = outer_;
}

void *CurrentCall::stream() const {
  return ctx_->device ? ctx_->device->nativeStream() : nullptr;
}

void CurrentCall::fail(grove_status status, const char *message) noexcept {
  failure_.record(status, message);
}

void CurrentCall::abandon(grove_status status, const char *message) noexcept {
  fail(status, message);
  abandon();
}

void CurrentCall::abandon() noexcept { abandonCall(); }

bool CurrentCall::run(void (*fn)(void **), void **args) {
  bool completed = runAbandonable(fn, args);
  abandoned_ = !completed;
  return completed;
}

CallState *CurrentCall::findState(const void *key) const {
  for (const auto &[k, state] : states_)
    if (k == key)
      return state.get();
  return nullptr;
}

void CurrentCall::beforeWrites() {
  for (const CallHooks &h : hooks())
    if (h.beforeWrites)
      h.beforeWrites(*this);
}

void CurrentCall::end() {
  if (ended_)
    return;
  ended_ = true;
  const std::vector<CallHooks> &all = hooks();
  for (auto h = all.rbegin(); h != all.rend(); ++h)
    if (h->end)
      h->end(*this, abandoned_);
  // Waits for the device's work; its failures land in this call.
  if (ctx_->device)
    (void)ctx_->device->endCall();
  states_.clear();
}

} // namespace grove::rt
