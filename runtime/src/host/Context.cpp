//===- Context.cpp - Context lifetime, introspection, version -------------===//

#include "Context.h"

#include "DType.h"
#include "Error.h"

#include <cstring>

using namespace grove::rt;

namespace grove::rt {

std::optional<size_t> findParam(const grove_context &ctx, const char *name) {
  for (size_t i = 0; i < ctx.desc.params.size(); ++i)
    if (ctx.desc.params[i].name == name)
      return i;
  return std::nullopt;
}

void fillInitializer(const grove_context &ctx, size_t i, uint8_t *arena) {
  const StateDesc &p = ctx.desc.params[i];
  const size_t width = elementBytes(p.dtype);
  uint8_t pattern[8];
  // Little end first, as the descriptor spells the bits and x86/ARM store.
  for (size_t b = 0; b < width; ++b)
    pattern[b] = static_cast<uint8_t>(p.initBits >> (8 * b));
  uint8_t *dst = arena + ctx.slots[i].offset;
  for (size_t at = 0; at < ctx.slots[i].bytes; at += width)
    std::memcpy(dst + at, pattern, width);
}

Buffer newArena(const grove_context &ctx) {
  // Zeroed so that unset weights never expose uninitialised memory through
  // get_weight or save.
  Buffer arena = allocateBuffer(ctx.arenaBytes, /*zero=*/true);
  if (arena)
    for (size_t i = 0; i < ctx.desc.params.size(); ++i)
      if (ctx.desc.params[i].kind == StateKind::Initialized)
        fillInitializer(ctx, i, arena.get());
  return arena;
}

grove_status adoptArena(grove_context &ctx, Buffer arena, bool weightsToo) {
  // A device model gets a complete new device copy too, swapped in only
  // when the upload succeeded.
  if (ctx.device)
    if (grove_status s = ctx.device->uploadWeights(arena.get(), ctx.arenaBytes))
      return s;
  // Commit point: nothing below can fail.
  ctx.arena = std::move(arena);
  ctx.prepared.changedAll();
  ctx.numParamsSet = 0;
  for (size_t i = 0; i < ctx.desc.params.size(); ++i) {
    bool set = weightsToo || ctx.paramSet[i] ||
               ctx.desc.params[i].kind == StateKind::Initialized;
    ctx.paramSet[i] = set;
    ctx.numParamsSet += set;
  }
  return GROVE_OK;
}

namespace {

grove_tensor_sig makeSig(const TensorDesc &t) {
  grove_tensor_sig sig;
  sig.name = t.name.c_str();
  sig.dtype = t.dtype;
  sig.ndim = static_cast<int32_t>(t.shape.size());
  sig.shape = t.shape.data();
  return sig;
}

/// Lays params out in the arena, each at a kBufferAlignment boundary.
grove_status layOutParams(grove_context &ctx) {
  size_t offset = 0;
  for (const TensorDesc &p : ctx.desc.params) {
    ParamSlot slot;
    size_t count = 0;
    if (!elementCount(p.shape.data(), p.shape.size(), count) ||
        !byteCount(count, elementBytes(p.dtype), slot.bytes))
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "param '" + p.name + "' shape " +
                      shapeString(p.shape.data(), p.shape.size()) +
                      " is too large");
    slot.offset = offset;
    slot.strides.resize(p.shape.size());
    compactStrides(p.shape.data(), p.shape.size(), slot.strides.data());
    size_t padded = (slot.bytes + kBufferAlignment - 1) / kBufferAlignment *
                    kBufferAlignment;
    if (padded < slot.bytes || __builtin_add_overflow(offset, padded, &offset))
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "model params are too large to address");
    ctx.slots.push_back(std::move(slot));
  }
  ctx.arenaBytes = offset;
  ctx.paramSet.assign(ctx.desc.params.size(), false);
  ctx.prepared.reset(ctx.desc.params.size());
  return GROVE_OK;
}

void buildSignatureViews(grove_context &ctx) {
  for (const TensorDesc &p : ctx.desc.params)
    ctx.paramSigs.push_back(makeSig(p));
  const size_t n = ctx.desc.entries.size();
  ctx.inputSigs.resize(n);
  ctx.outputSigs.resize(n);
  for (size_t e = 0; e < n; ++e) {
    const EntryDesc &entry = ctx.desc.entries[e];
    for (const TensorDesc &t : entry.inputs)
      ctx.inputSigs[e].push_back(makeSig(t));
    for (const TensorDesc &t : entry.outputs)
      ctx.outputSigs[e].push_back(makeSig(t));
    grove_entry_sig sig;
    sig.name = entry.name.c_str();
    sig.num_inputs = static_cast<uint32_t>(entry.inputs.size());
    sig.inputs = ctx.inputSigs[e].data();
    sig.num_outputs = static_cast<uint32_t>(entry.outputs.size());
    sig.outputs = ctx.outputSigs[e].data();
    ctx.entrySigs.push_back(sig);
  }
}

grove_status createContext(const grove_model_def *model,
                           const grove_context_options *options,
                           grove_context **outCtx) {
  if (!outCtx)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_create: out_ctx is NULL");
  *outCtx = nullptr;
  if (!model)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_create: model is NULL");
  // abi_version is the first field, so it is readable whatever the layout of
  // the rest; nothing else may be trusted before it matches.
  if (model->abi_version != GROVE_ABI_VERSION)
    return fail(GROVE_ERROR_ABI_MISMATCH,
                "grove_context_create: model built for ABI version " +
                    std::to_string(model->abi_version) +
                    ", this runtime implements version " +
                    std::to_string(GROVE_ABI_VERSION) +
                    "; recompile the model with a matching grovec");
  if (!model->name)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_create: model name is NULL");

  auto ctx = std::make_unique<grove_context>();
  ctx->model = model;
  if (grove_status s = parseDescriptor(model->descriptor, ctx->desc)) {
    // Prefix the parser's message with the model it came from.
    std::string message = grove_last_error();
    return fail(s, "grove_context_create: model " + quote(model->name) + ": " +
                       message);
  }
  const std::string prefix =
      "grove_context_create: model " + quote(model->name) + ": ";
  if (ctx->desc.module != model->name)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                prefix + "descriptor is for module '" + ctx->desc.module + "'");
  if (model->num_entries != ctx->desc.entries.size())
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                prefix + "num_entries is " +
                    std::to_string(model->num_entries) +
                    " but the descriptor has " +
                    std::to_string(ctx->desc.entries.size()) + " entries");
  if (model->num_entries > 0 && !model->entries)
    return fail(GROVE_ERROR_INVALID_ARGUMENT, prefix + "entry table is NULL");
  for (uint32_t i = 0; i < model->num_entries; ++i)
    if (!model->entries[i])
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  prefix + "entry function " + std::to_string(i) + " ('" +
                      ctx->desc.entries[i].name + "') is NULL");
  if (grove_status s = layOutParams(*ctx)) {
    std::string message = grove_last_error();
    return fail(s, prefix + message);
  }
  if (options && options->struct_size < sizeof(size_t))
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                prefix + "options->struct_size is " +
                    std::to_string(options->struct_size) +
                    "; call grove_context_options_init first");
  if (ctx->desc.target != "host")
    if (grove_status s = createDeviceContext(ctx->desc, options, ctx->device)) {
      std::string message = grove_last_error();
      return fail(s, prefix + message);
    }
  // Without weights there is nothing to wait for: the state exists from
  // the start, at its initialisers.
  bool hasWeights = false;
  for (const StateDesc &p : ctx->desc.params)
    hasWeights |= p.kind == StateKind::Weight;
  if (!hasWeights && !ctx->desc.params.empty()) {
    Buffer arena = newArena(*ctx);
    if (!arena)
      return fail(GROVE_ERROR_OUT_OF_MEMORY,
                  prefix + "cannot allocate " +
                      std::to_string(ctx->arenaBytes) + " bytes of state");
    if (grove_status s = adoptArena(*ctx, std::move(arena), true)) {
      std::string message = grove_last_error();
      return fail(s, prefix + message);
    }
  }
  buildSignatureViews(*ctx);
  *outCtx = ctx.release();
  return GROVE_OK;
}

} // namespace
} // namespace grove::rt

extern "C" {

GROVE_API const char *grove_runtime_version(void) {
#define GROVE_STR2(x) #x
#define GROVE_STR(x) GROVE_STR2(x)
  return GROVE_STR(GROVE_RUNTIME_VERSION_MAJOR) "." GROVE_STR(
      GROVE_RUNTIME_VERSION_MINOR) "." GROVE_STR(GROVE_RUNTIME_VERSION_PATCH);
#undef GROVE_STR
#undef GROVE_STR2
}

GROVE_API uint32_t grove_runtime_abi_version(void) { return GROVE_ABI_VERSION; }

GROVE_API grove_status grove_context_create(const grove_model_def *model,
                                            grove_context **out_ctx) {
  return guarded("grove_context_create",
                 [&] { return createContext(model, nullptr, out_ctx); });
}

GROVE_API void grove_context_options_init(grove_context_options *options) {
  if (!options)
    return;
  *options = grove_context_options{};
  options->struct_size = sizeof(grove_context_options);
}

GROVE_API grove_status grove_context_create_with_options(
    const grove_model_def *model, const grove_context_options *options,
    grove_context **out_ctx) {
  return guarded("grove_context_create_with_options",
                 [&] { return createContext(model, options, out_ctx); });
}

GROVE_API DLDevice grove_context_device(const grove_context *ctx) {
  if (ctx && ctx->device)
    return ctx->device->device();
  return DLDevice{kDLCPU, 0};
}

GROVE_API void grove_context_destroy(grove_context *ctx) { delete ctx; }

GROVE_API const grove_model_def *grove_context_model(const grove_context *ctx) {
  return ctx ? ctx->model : nullptr;
}

GROVE_API uint32_t grove_context_num_entries(const grove_context *ctx) {
  return ctx ? static_cast<uint32_t>(ctx->entrySigs.size()) : 0;
}

GROVE_API grove_status grove_context_entry(const grove_context *ctx,
                                           uint32_t index,
                                           const grove_entry_sig **out_sig) {
  return guarded("grove_context_entry", [&] {
    if (!ctx || !out_sig)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_entry: ctx or out_sig is NULL");
    *out_sig = nullptr;
    if (index >= ctx->entrySigs.size())
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_entry: index " + std::to_string(index) +
                      " out of range (model has " +
                      std::to_string(ctx->entrySigs.size()) + " entries)");
    *out_sig = &ctx->entrySigs[index];
    return GROVE_OK;
  });
}

GROVE_API grove_status grove_context_find_entry(const grove_context *ctx,
                                                const char *name,
                                                uint32_t *out_index) {
  return guarded("grove_context_find_entry", [&] {
    if (!ctx || !name || !out_index)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_find_entry: ctx, name or out_index is NULL");
    for (size_t i = 0; i < ctx->desc.entries.size(); ++i) {
      if (ctx->desc.entries[i].name == name) {
        *out_index = static_cast<uint32_t>(i);
        return GROVE_OK;
      }
    }
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_find_entry: model '" + ctx->desc.module +
                    "' has no entry '" + name + "'");
  });
}

GROVE_API uint32_t grove_context_num_params(const grove_context *ctx) {
  return ctx ? static_cast<uint32_t>(ctx->paramSigs.size()) : 0;
}

GROVE_API grove_status grove_context_param(const grove_context *ctx,
                                           uint32_t index,
                                           const grove_tensor_sig **out_sig) {
  return guarded("grove_context_param", [&] {
    if (!ctx || !out_sig)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_param: ctx or out_sig is NULL");
    *out_sig = nullptr;
    if (index >= ctx->paramSigs.size())
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_param: index " + std::to_string(index) +
                      " out of range (model has " +
                      std::to_string(ctx->paramSigs.size()) + " params)");
    *out_sig = &ctx->paramSigs[index];
    return GROVE_OK;
  });
}

GROVE_API grove_status grove_context_param_kind(const grove_context *ctx,
                                                uint32_t index,
                                                grove_param_kind *out_kind) {
  return guarded("grove_context_param_kind", [&] {
    if (!ctx || !out_kind)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_param_kind: ctx or out_kind is NULL");
    if (index >= ctx->desc.params.size())
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_param_kind: index " + std::to_string(index) +
                      " out of range (model has " +
                      std::to_string(ctx->desc.params.size()) + " params)");
    *out_kind = ctx->desc.params[index].kind == StateKind::Initialized
                    ? GROVE_PARAM_STATE
                    : GROVE_PARAM_WEIGHT;
    return GROVE_OK;
  });
}

GROVE_API grove_status grove_context_entry_access(const grove_context *ctx,
                                                  uint32_t entry,
                                                  uint32_t param,
                                                  int *out_access) {
  return guarded("grove_context_entry_access", [&] {
    if (!ctx || !out_access)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_entry_access: ctx or out_access is NULL");
    if (entry >= ctx->desc.entries.size() || param >= ctx->desc.params.size())
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_entry_access: entry " + std::to_string(entry) +
                      " or param " + std::to_string(param) + " out of range");
    *out_access = 0;
    for (const ArgDesc &a : ctx->desc.entries[entry].args)
      if (a.isState && a.index == param)
        *out_access = a.access == grove::rt::Access::Write ? 2 : 1;
    return GROVE_OK;
  });
}

GROVE_API int grove_context_weights_ready(const grove_context *ctx) {
  return ctx && ctx->weightsReady() ? 1 : 0;
}

} // extern "C"
