//===- PreparedParams.h - Params a service keeps transformed ----*- C++ -*-===//
//
// A service may keep a copy of a param in a form of its own across calls:
// the convolution service keeps weights in oneDNN's blocked or Winograd
// layouts, whose transforms cost as much as the convolution itself. Weights
// are mutable state, so such a copy is kept only while it provably equals
// the param:
//  * every param has a version, bumped by whatever may write it: a load
//    (a new arena), set_weight, and the end of every call of an entry that
//    writes it. A bump drops the param's copy.
//  * a param whose storage was handed out as a writable view
//    (grove_context_get_weight) is never prepared again (until a load
//    gives it new storage): writes through the view go unseen.
//  * only a call of an entry that reads the param (never writes it) may
//    use a copy, so the param cannot change during that call.
// A param keeps one copy, in the form asked for last. A copy is made when
// a form is asked for twice in a row at a version, so a param written
// between every pair of reads (a training loop that evaluates after each
// step) never pays for a transform it cannot reuse, and a service
// alternating between two forms keeps the copy it has. Runs of two forms
// (A A B B) do transform at each change: one copy bounds the memory.
// GROVE_PREPARED_PARAMS=0 turns copies off (every call then computes as the
// first call at a version does).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_PREPAREDPARAMS_H
#define GROVE_RT_PREPAREDPARAMS_H

#include "Tensor.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

struct grove_context;

namespace grove::rt {

class PreparedParams;

/// A param the current call only reads: its index and version, and the
/// store of its context's copies.
struct StableParam {
  size_t index = 0;
  uint64_t version = 0;
  PreparedParams *store = nullptr;
};

/// A prepared copy: its storage, kept alive by whoever uses it.
using PreparedCopy = std::shared_ptr<const Buffer>;

class PreparedParams {
public:
  /// Sizes the versions for `numParams` params (at context creation).
  void reset(size_t numParams);
  /// Param `index` may have changed: a new version, its copy dropped.
  void changed(size_t index) noexcept;
  /// Every param may have changed (a new arena); views are gone with it.
  void changedAll() noexcept;
  /// A writable view of param `index` was handed out.
  void exposed(size_t index) noexcept;

  /// The copy of `param` in the form `key` names (the service's own
  /// description of it), if one exists at its version. Otherwise, when
  /// `key` was asked for at this version before, `prepare(data)` fills a
  /// new copy of `bytes` (false: failed), which replaces the param's copy;
  /// the first time, nothing is made. Null when there is no copy, and when
  /// making it failed (memory, or `prepare`: not tried again at this
  /// version). Runs `prepare` under the store's lock. Never throws.
  PreparedCopy get(StableParam param, const std::vector<int64_t> &key,
                   size_t bytes,
                   const std::function<bool(void *)> &prepare) noexcept;

  /// How many copies are kept (for tests).
  size_t size() const;

private:
  /// What the store knows of one param at `version`.
  struct Slot {
    uint64_t version = 0;
    std::vector<int64_t> asked; // the form asked for last
    bool failed = false;        // making `asked` failed
    std::vector<int64_t> key;   // the copy's form
    PreparedCopy copy;
  };
  std::unique_ptr<std::atomic<uint64_t>[]> versions;
  std::unique_ptr<std::atomic<bool>[]> exposedFlags;
  std::unique_ptr<Slot[]> slots;
  size_t count = 0;
  mutable std::mutex mutex;

  friend std::optional<StableParam> findStableParam(const void *, size_t);
};

/// The param whose whole storage is [data, data + bytes) when the current
/// call's entry only reads it and no view exposes it; none otherwise (no
/// call, another buffer, a part of a param, a device context, copies off).
std::optional<StableParam> findStableParam(const void *data, size_t bytes);

} // namespace grove::rt

#endif // GROVE_RT_PREPAREDPARAMS_H
