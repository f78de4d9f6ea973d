//===- PreparedParams.cpp - Params a service keeps transformed ------------===//

#include "PreparedParams.h"

#include "Context.h"
#include "CurrentCall.h"
#include "Env.h"

using namespace grove::rt;

void PreparedParams::reset(size_t numParams) {
  std::lock_guard<std::mutex> lock(mutex);
  count = numParams;
  versions.reset(new std::atomic<uint64_t>[numParams]());
  exposedFlags.reset(new std::atomic<bool>[numParams]());
  slots.reset(new Slot[numParams]());
}

// The lock below cannot fail in practice (std::mutex::lock throws only on
// errors the runtime never causes); a version bump must not be lost, so
// these are noexcept and terminate if it ever did.
void PreparedParams::changed(size_t index) noexcept {
  std::lock_guard<std::mutex> lock(mutex);
  versions[index].fetch_add(1, std::memory_order_relaxed);
  slots[index] = Slot();
}

void PreparedParams::changedAll() noexcept {
  std::lock_guard<std::mutex> lock(mutex);
  for (size_t i = 0; i < count; ++i) {
    versions[i].fetch_add(1, std::memory_order_relaxed);
    exposedFlags[i].store(false, std::memory_order_relaxed);
    slots[i] = Slot();
  }
}

void PreparedParams::exposed(size_t index) noexcept {
  std::lock_guard<std::mutex> lock(mutex);
  exposedFlags[index].store(true, std::memory_order_relaxed);
  slots[index] = Slot();
}

PreparedCopy
PreparedParams::get(StableParam param, const std::vector<int64_t> &key,
                    size_t bytes,
                    const std::function<bool(void *)> &prepare) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mutex);
    // Checked again under the lock: a view may have been handed out, or the
    // param written, since the caller found it.
    if (param.index >= count ||
        exposedFlags[param.index].load(std::memory_order_relaxed) ||
        versions[param.index].load(std::memory_order_relaxed) != param.version)
      return nullptr;
    Slot &slot = slots[param.index];
    if (slot.version != param.version)
      slot = Slot{param.version, {}, false, {}, nullptr};
    if (slot.copy && slot.key == key) {
      // Asking for another form counts only when asked twice in a row: a
      // service alternating between two keeps the copy it has.
      slot.asked = key;
      return slot.copy;
    }
    if (slot.asked != key) {
      // The first time this form is asked for at this version.
      slot.asked = key;
      slot.failed = false;
      return nullptr;
    }
    if (slot.failed)
      return nullptr;
    slot.failed = true;  // until made
    slot.copy = nullptr; // one copy a param: the old form goes first
    Buffer copy = allocateBuffer(bytes);
    if (!copy || !prepare(copy.get()))
      return nullptr;
    slot.key = key;
    slot.copy = std::make_shared<const Buffer>(std::move(copy));
    slot.failed = false;
    return slot.copy;
  } catch (...) {
    // Out of memory, or the service's transform threw: the caller computes
    // without a copy, as on a first call.
    return nullptr;
  }
}

size_t PreparedParams::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  size_t n = 0;
  for (size_t i = 0; i < count; ++i)
    n += slots[i].copy != nullptr;
  return n;
}

std::optional<StableParam> grove::rt::findStableParam(const void *data,
                                                      size_t bytes) {
  static const bool off = [] {
    std::optional<unsigned long long> on =
        unsignedFromEnv("GROVE_PREPARED_PARAMS");
    return on && *on == 0;
  }();
  CurrentCall *call = currentCall();
  if (off || !call || !data)
    return std::nullopt;
  grove_context &ctx = call->context();
  if (ctx.device || !ctx.arena)
    return std::nullopt;
  PreparedParams &prepared = ctx.prepared;
  for (const schema::ArgDesc &arg : ctx.desc.entries[call->entry()].args) {
    if (!arg.isState || ctx.paramData(arg.index) != data ||
        ctx.slots[arg.index].bytes != bytes)
      continue;
    if (arg.access != schema::Access::Read || arg.index >= prepared.count ||
        prepared.exposedFlags[arg.index].load(std::memory_order_relaxed))
      return std::nullopt;
    return StableParam{
        arg.index, prepared.versions[arg.index].load(std::memory_order_relaxed),
        &prepared};
  }
  return std::nullopt;
}
