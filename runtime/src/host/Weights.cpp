//===- Weights.cpp - Setting and viewing individual params ----------------===//

#include "Context.h"

#include "DType.h"
#include "Error.h"

#include <cstring>
#include <mutex>

using namespace grove::rt;

namespace {

grove_status setWeight(grove_context *ctx, const char *name,
                       const DLTensor *value) {
  if (!ctx || !name)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_set_weight: ctx or name is NULL");
  std::optional<size_t> found = findParam(*ctx, name);
  if (!found)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_set_weight: model '" + ctx->desc.module +
                    "' has no param '" + name + "'");
  const size_t index = *found;
  const TensorDesc &param = ctx->desc.params[index];
  const std::string what =
      "grove_context_set_weight: param '" + param.name + "'";
  // Structural problems with the tensor are argument errors; a dtype or shape
  // that disagrees with the model is reported like a mismatching weights file.
  if (value && value->device.device_type == kDLCPU &&
      (!sameDType(value->dtype, param.dtype) ||
       value->ndim != static_cast<int>(param.shape.size()) ||
       (value->ndim > 0 && value->shape &&
        std::memcmp(value->shape, param.shape.data(),
                    param.shape.size() * sizeof(int64_t)) != 0)))
    return fail(GROVE_ERROR_BAD_WEIGHTS,
                what + ": expected " + dtypeName(param.dtype) + " " +
                    shapeString(param.shape.data(), param.shape.size()) +
                    ", got " + dtypeName(value->dtype) + " " +
                    (value->ndim >= 0 && (value->shape || value->ndim == 0)
                         ? shapeString(value->shape, value->ndim, true)
                         : "rank " + std::to_string(value->ndim)));
  if (grove_status s = checkTensor(value, param, what,
                                   /*requireCompact=*/false))
    return s;

  std::unique_lock<std::shared_mutex> exclusive(ctx->stateLock);
  if (!ctx->arena) {
    // First weight ever set: create the arena, with initialised state at
    // its initialisers.
    Buffer arena = newArena(*ctx);
    if (!arena)
      return fail(GROVE_ERROR_OUT_OF_MEMORY,
                  what + ": cannot allocate " +
                      std::to_string(ctx->arenaBytes) + " bytes of weights");
    if (grove_status s = adoptArena(*ctx, std::move(arena), false)) {
      std::string message = grove_last_error();
      return fail(s, what + ": " + message);
    }
  }
  const int64_t *strides = value->strides;
  std::vector<int64_t> compact;
  if (!strides) {
    compact.resize(param.shape.size());
    compactStrides(param.shape.data(), param.shape.size(), compact.data());
    strides = compact.data();
  }
  stridedCopy(ctx->paramData(index), tensorData(*value), param.shape.data(),
              strides, param.shape.size(), elementBytes(param.dtype));
  ctx->prepared.changed(index);
  if (ctx->device)
    if (grove_status s = ctx->device->updateWeights(
            ctx->arena.get(), ctx->arenaBytes, ctx->slots[index].offset,
            ctx->slots[index].bytes)) {
      std::string message = grove_last_error();
      return fail(s, what + ": " + message);
    }
  if (!ctx->paramSet[index]) {
    ctx->paramSet[index] = true;
    ++ctx->numParamsSet;
  }
  return GROVE_OK;
}

grove_status getWeight(grove_context *ctx, const char *name, DLTensor *out) {
  if (!ctx || !name || !out)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_get_weight: ctx, name or out_view is NULL");
  std::optional<size_t> found = findParam(*ctx, name);
  if (!found)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_get_weight: model '" + ctx->desc.module +
                    "' has no param '" + name + "'");
  const size_t index = *found;
  std::shared_lock<std::shared_mutex> shared(ctx->stateLock);
  if (!ctx->paramSet[index])
    return fail(GROVE_ERROR_BAD_WEIGHTS,
                "grove_context_get_weight: param '" + std::string(name) +
                    "' has not been set; load weights first");
  const TensorDesc &param = ctx->desc.params[index];
  // Writes through the view would go unseen by copies services keep.
  ctx->prepared.exposed(index);
  std::memset(out, 0, sizeof(*out));
  out->data = ctx->paramData(index);
  out->device.device_type = kDLCPU;
  out->device.device_id = 0;
  if (ctx->device) {
    out->data = ctx->device->weights() + ctx->slots[index].offset;
    out->device = ctx->device->device();
  }
  out->ndim = static_cast<int>(param.shape.size());
  out->dtype = param.dtype;
  // DLTensor's shape/strides are non-const for historical reasons; the view
  // must still be treated as read-only metadata.
  out->shape = const_cast<int64_t *>(param.shape.data());
  out->strides = const_cast<int64_t *>(ctx->slots[index].strides.data());
  out->byte_offset = 0;
  return GROVE_OK;
}

} // namespace

extern "C" {

GROVE_API grove_status grove_context_set_weight(grove_context *ctx,
                                                const char *name,
                                                const DLTensor *value) {
  return guarded("grove_context_set_weight",
                 [&] { return setWeight(ctx, name, value); });
}

GROVE_API grove_status grove_context_get_weight(grove_context *ctx,
                                                const char *name,
                                                DLTensor *out_view) {
  return guarded("grove_context_get_weight",
                 [&] { return getWeight(ctx, name, out_view); });
}

} // extern "C"
