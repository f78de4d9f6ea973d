//===- PreparedParams.cpp - Params a service keeps transformed ------------===//

#include "PreparedParams.h"

#include "Context.h"
#include "CurrentCall.h"

#include <new>

using namespace grove::rt;

void PreparedParams::reset(size_t numParams) {
  std::lock_guard<std::mutex> lock(mutex);
  count = numParams;
  versions.reset(new std::atomic<uint64_t>[numParams]());
  exposedFlags.reset(new std::atomic<bool>[numParams]());
  entries.clear();
}

void PreparedParams::drop(size_t index) {
  auto it = entries.lower_bound({index, {}});
  while (it != entries.end() && it->first.first == index)
    it = entries.erase(it);
}

void PreparedParams::changed(size_t index) {
  std::lock_guard<std::mutex> lock(mutex);
  versions[index].fetch_add(1, std::memory_order_relaxed);
  drop(index);
}

void PreparedParams::changedAll() {
  std::lock_guard<std::mutex> lock(mutex);
  for (size_t i = 0; i < count; ++i) {
    versions[i].fetch_add(1, std::memory_order_relaxed);
    exposedFlags[i].store(false, std::memory_order_relaxed);
  }
  entries.clear();
}

void PreparedParams::exposed(size_t index) {
  std::lock_guard<std::mutex> lock(mutex);
  exposedFlags[index].store(true, std::memory_order_relaxed);
  drop(index);
}

PreparedCopy PreparedParams::get(StableParam param,
                                 const std::vector<int64_t> &key, size_t bytes,
                                 const std::function<bool(void *)> &prepare) {
  std::lock_guard<std::mutex> lock(mutex);
  // Checked again under the lock: a view may have been handed out, or the
  // param written, since the caller found it.
  if (param.index >= count ||
      exposedFlags[param.index].load(std::memory_order_relaxed) ||
      versions[param.index].load(std::memory_order_relaxed) != param.version)
    return nullptr;
  auto [it, inserted] = entries.try_emplace({param.index, key});
  Entry &entry = it->second;
  if (inserted || entry.version != param.version) {
    // The first call to ask at this version: remember it, make nothing.
    entry = Entry{param.version, nullptr};
    return nullptr;
  }
  if (entry.copy)
    return entry.copy;
  Buffer copy = allocateBuffer(bytes);
  if (!copy)
    throw std::bad_alloc();
  if (!prepare(copy.get()))
    return nullptr;
  entry.copy = std::make_shared<const Buffer>(std::move(copy));
  return entry.copy;
}

std::optional<StableParam> grove::rt::findStableParam(const void *data,
                                                      size_t bytes) {
  CurrentCall *call = currentCall();
  if (!call || !data)
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

size_t PreparedParams::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  size_t n = 0;
  for (const auto &[key, entry] : entries)
    n += entry.copy != nullptr;
  return n;
}
