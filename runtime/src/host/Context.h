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
#include "Tensor.h"

#include <optional>
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

  // Weights: all params in one 64-byte aligned arena, allocated on the first
  // load/set. A load builds a complete new arena and swaps it in, which is
  // what makes loading all-or-nothing.
  std::vector<grove::rt::ParamSlot> slots;
  size_t arenaBytes = 0;
  grove::rt::Buffer arena;
  std::vector<bool> paramSet;
  size_t numParamsSet = 0;

  // Device models only: device weights, stream, libraries (Device.h). The
  // host arena above stays the staging copy for load/set/save.
  std::unique_ptr<grove::rt::DeviceContext> device;

  bool weightsReady() const { return numParamsSet == desc.params.size(); }
  uint8_t *paramData(size_t i) const { return arena.get() + slots[i].offset; }
};

namespace grove::rt {

/// Index of param `name`, if the model has one.
std::optional<size_t> findParam(const grove_context &ctx, const char *name);

} // namespace grove::rt

#endif // GROVE_RT_CONTEXT_H
