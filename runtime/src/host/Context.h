//===- Context.h - grove_context internals ----------------------*- C++ -*-===//
//
// The context owns the parsed descriptor, the C views of it handed out by the
// introspection API, and the weight arena. Kept in one struct so that every
// concern (weights, invoke, introspection) sees the same state.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_CONTEXT_H
#define GROVE_RT_CONTEXT_H

#include "Descriptor.h"
#include "Device.h"
#include "PreparedParams.h"
#include "Services.h"
#include "Tensor.h"

#include <optional>
#include <shared_mutex>
#include <vector>

namespace grove::rt {

/// Where param `i` lives in the arena.
struct ParamSlot {
  size_t offset = 0; // multiple of kBufferAlignment
  size_t bytes = 0;
  std::vector<int64_t> strides; // compact row-major, for get_weight views
};

} // namespace grove::rt

struct grove_context {
  const grove_model_def *model = nullptr;
  grove::rt::ModelDesc desc;

  // C views of `desc` (pointers into desc's strings/vectors, which are never
  // modified after creation).
  std::vector<grove_tensor_sig> paramSigs;
  std::vector<std::vector<grove_tensor_sig>> inputSigs, outputSigs;
  std::vector<grove_entry_sig> entrySigs;

  // State: all params (weights and initialised state) in one 64-byte
  // aligned arena, allocated on the first load/set (at creation when the
  // model has no weights). A new arena starts with every initialised state
  // at its initialiser. A load builds a complete new arena and swaps it in,
  // which is what makes loading all-or-nothing.
  std::vector<grove::rt::ParamSlot> slots;
  size_t arenaBytes = 0;
  grove::rt::Buffer arena;
  std::vector<bool> paramSet;
  size_t numParamsSet = 0;

  // Device models only: device weights, stream, libraries (Device.h). The
  // host arena above stays the staging copy for load/set/save.
  std::unique_ptr<grove::rt::DeviceContext> device;

  // What the context owns for the services generated code calls; they find
  // it through the current call (CurrentCall.h).
  grove::rt::ServiceRegistry services;

  // Params that services keep transformed across calls, and the versions
  // that say when such a copy is stale (PreparedParams.h).
  grove::rt::PreparedParams prepared;

  // Calls that write state, loads and set_weight hold this exclusively;
  // calls that only read state, saves and get_weight share it.
  mutable std::shared_mutex stateLock;

  bool weightsReady() const { return numParamsSet == desc.params.size(); }
  uint8_t *paramData(size_t i) const { return arena.get() + slots[i].offset; }
};

namespace grove::rt {

/// Index of param `name`, if the model has one.
std::optional<size_t> findParam(const grove_context &ctx, const char *name);

/// Fills the slot of initialised state `i` of `arena` with its initialiser.
void fillInitializer(const grove_context &ctx, size_t i, uint8_t *arena);

/// A fresh arena for `ctx`: zeroed, with every initialised state at its
/// initialiser; empty on allocation failure.
Buffer newArena(const grove_context &ctx);

/// Makes `arena` the context's (host copy; device models upload it first)
/// and marks the params it holds as set: initialised state always, weights
/// when `weightsToo`.
grove_status adoptArena(grove_context &ctx, Buffer arena, bool weightsToo);

} // namespace grove::rt

#endif // GROVE_RT_CONTEXT_H
