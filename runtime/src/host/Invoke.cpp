//===- Invoke.cpp - Calling packed entry functions ------------------------===//
//
// Marshals DLTensors into MLIR memref descriptors, calls the generated packed
// function, and turns the result descriptors it writes into DLManagedTensors
// following the ownership rule in docs/abi.md.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "Agreement.h"
#include "Communicator.h"

#include "DType.h"
#include "Error.h"
#include "Forest.h"
#include "Memory.h"
#include "Services.h"
#include "Threads.h"
#include "Trace.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <variant>

using namespace grove::rt;

namespace {

/// Bumps the version of every param `entry` writes when it goes out of
/// scope (PreparedParams.h).
class BumpWrittenParams {
public:
  BumpWrittenParams(grove_context &ctx, const EntryDesc &entry)
      : ctx(ctx), entry(entry) {}
  ~BumpWrittenParams() {
    for (const ArgDesc &a : entry.args)
      if (a.isState && a.access == grove::schema::Access::Write)
        ctx.prepared.changed(a.index);
  }
  BumpWrittenParams(const BumpWrittenParams &) = delete;
  BumpWrittenParams &operator=(const BumpWrittenParams &) = delete;

private:
  grove_context &ctx;
  const EntryDesc &entry;
};

} // namespace

// Memref descriptors store pointers in 64-bit words.
static_assert(sizeof(void *) == sizeof(int64_t), "Grove ABI needs 64-bit");

namespace {

/// MLIR's marker for a memref backed by a global constant: never freed.
const uintptr_t kGlobalSentinel = 0xdeadbeef;

size_t memrefWords(size_t rank) { return 3 + 2 * rank; }

/// Writes a compact row-major descriptor for `data` into `words`.
void writeMemref(int64_t *words, void *data, const int64_t *shape,
                 size_t rank) {
  std::memcpy(&words[0], &data, sizeof(void *)); // allocated
  std::memcpy(&words[1], &data, sizeof(void *)); // aligned
  words[2] = 0;                                  // offset
  std::memcpy(&words[3], shape, rank * sizeof(int64_t));
  compactStrides(shape, rank, &words[3 + rank]);
}

/// A byte range the runtime (or caller) owns; a result inside one of these
/// must be copied, never freed.
struct Range {
  uintptr_t begin, end;
  bool contains(uintptr_t p) const {
    return p == begin || (p >= begin && p < end);
  }
};

/// How result buffers are freed: as the generated code frees its buffers
/// on the host (Memory.cpp), the device allocator for device models.
struct Releaser {
  DeviceReleaser device;    // empty: host
  bool runtimeCopy = false; // allocateBuffer's, not the generated code's
  void operator()(void *p) const {
    if (device.fn)
      device(p);
    else if (runtimeCopy)
      std::free(p);
    else
      hostFree(p);
  }
};

/// Heap payload behind each returned DLManagedTensor.
struct OutputHolder {
  DLManagedTensor managed{};
  std::vector<int64_t> shape, strides;
  void *allocation = nullptr; // freed with `release`
  Releaser release;

  ~OutputHolder() { release(allocation); }
  static void deleter(DLManagedTensor *self) {
    delete static_cast<OutputHolder *>(self->manager_ctx);
  }
};

/// One result descriptor as written by the generated code.
struct RawResult {
  void *allocated = nullptr;
  uint8_t *aligned = nullptr;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  size_t count = 0, bytes = 0;
  bool owned = false; // the runtime must free `allocated`
};

/// Frees owned result buffers that no returned tensor took over, on every
/// exit path (success, validation failure, exception).
struct AllocationReaper {
  std::set<void *> owned, claimed;
  Releaser release;
  ~AllocationReaper() {
    for (void *p : owned)
      if (!claimed.count(p))
        release(p);
  }
};

class Invocation {
public:
  Invocation(grove_context &ctx, uint32_t index)
      : ctx(ctx), entry(ctx.desc.entries[index]), fn(ctx.model->entries[index]),
        index(index) {}

  /// `inputs`: entry.inputs.size() tensors; `slots`: where results go.
  grove_status run(const DLTensor *const *inputs,
                   DLManagedTensor **const *slots);

private:
  std::string label(bool isInput, size_t k) const {
    return "entry '" + entry.name + "' " + tensorLabel(isInput, k);
  }
  std::string tensorLabel(bool isInput, size_t k) const {
    const TensorDesc &t = isInput ? entry.inputs[k] : entry.outputs[k];
    return (isInput ? "input " : "output ") + std::to_string(k) + " '" +
           t.name + "'";
  }
  /// The values of input `k` (checked by checkTensor) on the host: read
  /// back from the device into `host` where they live there.
  grove_status hostValues(size_t k, const DLTensor &t, size_t &count,
                          std::vector<uint8_t> &host,
                          const void *&values) const {
    count = 0;
    elementCount(t.shape, entry.inputs[k].shape.size(), count);
    values = tensorData(t);
    if (t.device.device_type != kDLCPU && ctx.device) {
      host.resize(count * elementBytes(t.dtype));
      if (grove_status s =
              ctx.device->download(host.data(), values, host.size()))
        return s;
      values = host.data();
    }
    return GROVE_OK;
  }
  /// Preconditions (grove/ModelSchema.h), one check function per kind;
  /// input `k` passed checkTensor, as did every input it names.
  grove_status check(size_t k, const EqualDimPrecondition &p,
                     const DLTensor *const *inputs) const {
    int64_t size = inputs[k]->shape[p.dim];
    int64_t other = inputs[p.input]->shape[p.inputDim];
    if (size == other)
      return GROVE_OK;
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                label(true, k) + ": dimension " + std::to_string(p.dim) +
                    " is " + std::to_string(size) +
                    " but must equal dimension " + std::to_string(p.inputDim) +
                    " of " + tensorLabel(true, size_t(p.input)) + " (" +
                    std::to_string(other) + ")");
  }
  grove_status check(size_t k, const BoundPrecondition &p,
                     const DLTensor *const *inputs) const {
    size_t count = 0;
    std::vector<uint8_t> host;
    const void *values = nullptr;
    if (grove_status s = hostValues(k, *inputs[k], count, host, values))
      return s;
    return checkBelow(values, count, inputs[k]->dtype, p.bound, label(true, k));
  }
  /// The whole forest whose child offsets are input `k` (docs/trees.md).
  grove_status check(size_t k, const ForestPrecondition &p,
                     const DLTensor *const *inputs) const {
    const size_t parts[3] = {k, size_t(p.children), size_t(p.roots)};
    std::vector<uint8_t> host[3];
    const void *values[3];
    size_t counts[3];
    for (int i = 0; i < 3; ++i)
      if (grove_status s = hostValues(parts[i], *inputs[parts[i]], counts[i],
                                      host[i], values[i]))
        return s;
    if (counts[0] == 0)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  label(true, k) +
                      ": a forest's child offsets hold N + 1 values, got 0");
    ForestView forest;
    forest.numNodes = int64_t(counts[0]) - 1;
    forest.offsets = static_cast<const int32_t *>(values[0]);
    forest.numEdges = int64_t(counts[1]);
    forest.children = static_cast<const int32_t *>(values[1]);
    forest.numRoots = int64_t(counts[2]);
    forest.roots = static_cast<const int32_t *>(values[2]);
    forest.maxArity = p.arity;
    std::string error;
    if (!validateForest(forest, error))
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "entry '" + entry.name + "': the forest of inputs '" +
                      entry.inputs[k].name + "', '" +
                      entry.inputs[parts[1]].name + "' and '" +
                      entry.inputs[parts[2]].name + "' is malformed: " + error);
    return GROVE_OK;
  }
  /// A row per node of the forest of input `p.offsets` (checked before).
  grove_status check(size_t k, const ForestNodesPrecondition &p,
                     const DLTensor *const *inputs) const {
    int64_t nodes = inputs[p.offsets]->shape[0] - 1;
    if (inputs[k]->shape[0] == nodes)
      return GROVE_OK;
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                label(true, k) + ": dimension 0 is " +
                    std::to_string(inputs[k]->shape[0]) +
                    " but the forest of " +
                    tensorLabel(true, size_t(p.offsets)) + " has " +
                    std::to_string(nodes) + " nodes");
  }
  /// Every input's preconditions, kind by kind in the variant's order
  /// (sizes before values, a forest before its rows): the first broken one
  /// refuses the call before any generated code runs.
  grove_status checkPreconditions(const DLTensor *const *inputs) const {
    for (size_t kind = 0; kind < std::variant_size_v<Precondition>; ++kind)
      for (size_t k = 0; k < entry.inputs.size(); ++k)
        for (const Precondition &p : entry.inputs[k].preconditions) {
          if (p.index() != kind)
            continue;
          if (grove_status s = std::visit(
                  [&](const auto &q) { return check(k, q, inputs); }, p))
            return s;
        }
    return GROVE_OK;
  }
  /// The call's own checks: weights set, inputs well formed, their
  /// preconditions.
  grove_status checkCall(const DLTensor *const *inputs) const {
    if (!ctx.weightsReady()) {
      for (size_t i = 0; i < ctx.desc.params.size(); ++i)
        if (!ctx.paramSet[i])
          return fail(GROVE_ERROR_BAD_WEIGHTS,
                      "entry '" + entry.name + "': param '" +
                          ctx.desc.params[i].name +
                          "' is not set; load the weights before calling");
    }
    const DLDevice device =
        ctx.device ? ctx.device->device() : DLDevice{kDLCPU, 0};
    for (size_t k = 0; k < entry.inputs.size(); ++k)
      if (grove_status s =
              checkTensor(inputs[k], entry.inputs[k], label(true, k),
                          /*requireCompact=*/true, device))
        return s;
    return checkPreconditions(inputs);
  }
  grove_status decodeResults(const std::vector<int64_t> &words,
                             std::vector<RawResult> &results);
  grove_status wrapResults(std::vector<RawResult> &results,
                           AllocationReaper &reaper,
                           DLManagedTensor **const *slots);

  grove_context &ctx;
  const EntryDesc &entry;
  grove_packed_fn fn;
  uint32_t index;
};

grove_status Invocation::decodeResults(const std::vector<int64_t> &words,
                                       std::vector<RawResult> &results) {
  size_t at = 0;
  grove_status status = GROVE_OK;
  for (size_t k = 0; k < entry.outputs.size(); ++k) {
    const TensorDesc &sig = entry.outputs[k];
    const size_t rank = sig.shape.size();
    const int64_t *w = words.data() + at;
    at += memrefWords(rank);
    RawResult r;
    std::memcpy(&r.allocated, &w[0], sizeof(void *));
    std::memcpy(&r.aligned, &w[1], sizeof(void *));
    r.offset = w[2];
    r.sizes.assign(w + 3, w + 3 + rank);
    r.strides.assign(w + 3 + rank, w + 3 + 2 * rank);

    // Validate before trusting anything; report the first problem but keep
    // decoding so that the other results' buffers can still be freed.
    // A descriptor with impossible sizes is garbage: its pointers may be
    // garbage too, so its buffer is leaked rather than freed. One that is
    // merely inconsistent with the signature is freed as usual.
    std::string problem;
    bool garbage = false;
    for (size_t d = 0; d < rank; ++d)
      garbage |= r.sizes[d] < 0;
    if (garbage || !elementCount(r.sizes.data(), rank, r.count) ||
        !byteCount(r.count, elementBytes(sig.dtype), r.bytes)) {
      garbage = true;
      problem = "returned impossible shape " +
                shapeString(r.sizes.data(), rank, /*literal=*/true);
    }
    for (size_t d = 0; d < rank && problem.empty(); ++d)
      if (sig.shape[d] >= 0 && r.sizes[d] != sig.shape[d])
        problem = "returned shape " + shapeString(r.sizes.data(), rank) +
                  ", signature says " + shapeString(sig.shape.data(), rank);
    if (problem.empty() && r.count > 0 && !r.aligned) {
      garbage = true;
      problem =
          "returned a NULL buffer for " + std::to_string(r.count) + " elements";
    }
    if (!problem.empty() && status == GROVE_OK)
      status = fail(GROVE_ERROR_INTERNAL,
                    label(false, k) + ": generated code " + problem);
    if (garbage)
      r.allocated = nullptr;
    results.push_back(std::move(r));
  }
  return status;
}

/// Decides which result buffers the runtime owns (and so must free or hand
/// over): everything except NULL, the global-constant sentinel, and pointers
/// into memory the call borrowed (params, inputs).
void markOwnership(std::vector<RawResult> &results,
                   const std::vector<Range> &borrowed,
                   AllocationReaper &reaper) {
  for (RawResult &r : results) {
    auto p = reinterpret_cast<uintptr_t>(r.allocated);
    r.owned = r.allocated && p != kGlobalSentinel;
    for (const Range &range : borrowed)
      if (r.owned && range.contains(p))
        r.owned = false;
    if (r.owned)
      reaper.owned.insert(r.allocated);
  }
}

grove_status Invocation::wrapResults(std::vector<RawResult> &results,
                                     AllocationReaper &reaper,
                                     DLManagedTensor **const *slots) {
  std::vector<std::unique_ptr<OutputHolder>> holders;
  for (size_t k = 0; k < results.size(); ++k) {
    RawResult &r = results[k];
    const TensorDesc &sig = entry.outputs[k];
    const size_t rank = sig.shape.size();
    const size_t elemBytes = elementBytes(sig.dtype);
    auto holder = std::make_unique<OutputHolder>();
    holder->shape = r.sizes;
    holder->strides.resize(rank);
    compactStrides(r.sizes.data(), rank, holder->strides.data());
    // Rank 0 too gets non-NULL shape and strides (arrays of no elements).
    holder->shape.reserve(1);
    holder->strides.reserve(1);

    // Take the buffer over only if we own it, it is compact, and no earlier
    // result took it already (two results may share one allocation).
    const bool compact = isCompact(r.sizes.data(), r.strides.data(), rank);
    bool take =
        r.owned && r.count > 0 && compact && !reaper.claimed.count(r.allocated);
    holder->release = reaper.release;
    // Only form the element-0 address when there are elements: with none,
    // `aligned` may be NULL and offsetting it would be undefined.
    uint8_t *first =
        r.count > 0 ? r.aligned + r.offset * static_cast<int64_t>(elemBytes)
                    : nullptr;
    uint8_t *data = first;
    if (take) {
      holder->allocation = r.allocated;
      reaper.claimed.insert(r.allocated);
    } else if (ctx.device) {
      // Device results are compact by construction (identity layouts at
      // the function boundary); an alias of an input or weight is copied.
      if (r.count > 0 && !compact)
        return fail(GROVE_ERROR_INTERNAL,
                    label(false, k) +
                        ": generated code returned a non-compact device "
                        "buffer");
      if (r.count > 0) {
        void *copy = ctx.device->allocate(r.bytes);
        if (!copy)
          return fail(GROVE_ERROR_OUT_OF_MEMORY,
                      label(false, k) + ": cannot allocate " +
                          std::to_string(r.bytes) +
                          " device bytes for the result");
        holder->allocation = copy;
        if (grove_status s = ctx.device->copy(copy, first, r.bytes))
          return fail(s, label(false, k) + ": " + grove_last_error());
        data = static_cast<uint8_t *>(copy);
      }
    } else {
      Buffer copy = allocateBuffer(r.bytes);
      if (!copy)
        return fail(GROVE_ERROR_OUT_OF_MEMORY,
                    label(false, k) + ": cannot allocate " +
                        std::to_string(r.bytes) + " bytes for the result");
      if (r.count > 0)
        stridedCopy(copy.get(), first, r.sizes.data(), r.strides.data(), rank,
                    elemBytes);
      data = copy.get();
      holder->allocation = copy.release();
      holder->release.runtimeCopy = true;
    }
    DLTensor &t = holder->managed.dl_tensor;
    t.data = data;
    t.device = ctx.device ? ctx.device->device() : DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int>(rank);
    t.dtype = sig.dtype;
    t.shape = holder->shape.data();
    t.strides = holder->strides.data();
    t.byte_offset = 0;
    holder->managed.manager_ctx = holder.get();
    holder->managed.deleter = &OutputHolder::deleter;
    holders.push_back(std::move(holder));
  }
  // Success: hand every tensor over at once (all-or-nothing).
  for (size_t k = 0; k < holders.size(); ++k)
    *slots[k] = &holders[k].release()->managed;
  return GROVE_OK;
}

grove_status Invocation::run(const DLTensor *const *inputs,
                             DLManagedTensor **const *slots) {
  trace::Span span("entry", "");
  if (span.on()) {
    span.setName(entry.name);
    span.arg("model", ctx.desc.module.c_str());
  }
  for (size_t k = 0; k < entry.outputs.size(); ++k) {
    if (!slots[k])
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  label(false, k) + ": output slot is NULL");
    *slots[k] = nullptr;
  }
  // Entries that write state run alone; readers share the context.
  std::shared_lock<std::shared_mutex> shared(ctx.stateLock, std::defer_lock);
  std::unique_lock<std::shared_mutex> exclusive(ctx.stateLock, std::defer_lock);
  if (entry.writesState())
    exclusive.lock();
  else
    shared.lock();
  // Before any generated code: a rejected call writes no state. Ranks of
  // a data-parallel job agree first, so that one rank's refusal or
  // mismatch fails every rank's call rather than leave them waiting.
  std::shared_ptr<PendingAgreement> agreement;
  if (grove_status s =
          agreeOnCall(ctx, index, inputs, checkCall(inputs), &agreement))
    return s;

  // Argument descriptors in the packed function's order (the descriptor's
  // `read`/`write`/`input` lines), all in one word array; args point into
  // it.
  std::vector<size_t> starts;
  size_t words = 0;
  for (const ArgDesc &a : entry.args) {
    starts.push_back(words);
    words += memrefWords(a.isState ? ctx.desc.params[a.index].shape.size()
                                   : entry.inputs[a.index].shape.size());
  }
  std::vector<int64_t> argWords(words, 0);
  std::vector<void *> args;
  std::vector<Range> borrowed;
  uint8_t *state = ctx.device ? ctx.device->weights() : ctx.arena.get();
  if (state) {
    auto base = reinterpret_cast<uintptr_t>(state);
    borrowed.push_back({base, base + ctx.arenaBytes});
  }
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const ArgDesc &a = entry.args[i];
    int64_t *slot = &argWords[starts[i]];
    args.push_back(slot);
    if (a.isState) {
      const TensorDesc &p = ctx.desc.params[a.index];
      writeMemref(slot, state + ctx.slots[a.index].offset, p.shape.data(),
                  p.shape.size());
      continue;
    }
    const DLTensor &t = *inputs[a.index];
    const size_t rank = entry.inputs[a.index].shape.size();
    uint8_t *data = t.data ? tensorData(t) : nullptr;
    writeMemref(slot, data, t.shape, rank);
    size_t count = 0, bytes = 0;
    elementCount(t.shape, rank, count);
    byteCount(count, elementBytes(t.dtype), bytes);
    if (data)
      borrowed.push_back({reinterpret_cast<uintptr_t>(data),
                          reinterpret_cast<uintptr_t>(data) + bytes});
  }
  size_t resultWords = 0;
  for (const TensorDesc &out : entry.outputs)
    resultWords += memrefWords(out.shape.size());
  std::vector<int64_t> resultBuffer(resultWords, 0);
  if (!entry.outputs.empty())
    args.push_back(resultBuffer.data());

  bool completed, failed;
  std::string serviceError;
  grove_status serviceStatus = GROVE_OK;
  // What the entry may write is new to the copies services keep, however
  // the call ends (a failed call wrote nothing: dropping copies then costs
  // only time); still under the exclusive lock.
  BumpWrittenParams bump(ctx, entry);
  {
    // Services the generated code calls find this context through it; it
    // begins and ends the device's part and every service's (hooks).
    CurrentCall call(ctx, index);
    if (agreement)
      adoptAgreement(call, agreement);
    {
      // Host calls size their thread team for a shared machine (Threads.h).
      std::optional<CallThreads> threads;
      if (!ctx.device)
        threads.emplace();
      completed = call.run(fn, args.data());
    }
    // Waits for the device work; its failures land in the call's.
    call.end();
    failed = call.takeFailure(serviceError, serviceStatus);
  }
  // The ranks disagreed on this call: no collective of it ran, nor any
  // state write; that is the failure to report (once the results the code
  // may have made are in the reaper's hands).
  std::string disagreement;
  grove_status agreementStatus = GROVE_OK;
  const bool disagreed =
      agreement && !agreement->wait(disagreement, agreementStatus);
  auto disagreementFailure = [&] {
    return fail(agreementStatus, "entry '" + entry.name + "': " + disagreement);
  };
  if (!completed && disagreed)
    return disagreementFailure();
  if (!completed) {
    // Out of host memory, or a collective failed: the call's buffers are
    // freed, no result exists. State is as before the call: generated code
    // writes state last, after every allocation and collective (docs/abi.md,
    // "State"). Collectives it started ended with it (their hooks).
    if (!failed)
      serviceStatus = GROVE_ERROR_OUT_OF_MEMORY;
    return fail(serviceStatus,
                "entry '" + entry.name + "': " +
                    (serviceStatus == GROVE_ERROR_OUT_OF_MEMORY
                         ? serviceError
                         : "a runtime service failed: " + serviceError));
  }

  // From here on every exit frees the result buffers nobody took over.
  std::vector<RawResult> results;
  grove_status decoded = decodeResults(resultBuffer, results);
  AllocationReaper reaper;
  if (ctx.device)
    reaper.release.device = ctx.device->releaser();
  markOwnership(results, borrowed, reaper);
  if (disagreed)
    return disagreementFailure();
  if (failed)
    return fail(serviceStatus,
                "entry '" + entry.name + "': " +
                    (serviceStatus == GROVE_ERROR_INVALID_ARGUMENT
                         ? serviceError
                         : "a runtime service failed: " + serviceError));
  if (decoded != GROVE_OK)
    return decoded;
  return wrapResults(results, reaper, slots);
}

/// NULLs the output slots of entry `index` of `model` in `args` before a
/// failure that comes before the context can say how many there are (no
/// context, another model's): abi.md promises NULL slots on every failure.
/// The model's own descriptor says; one that does not parse is left alone.
static void clearOutputSlots(const grove_model_def *model, uint32_t index,
                             void **args) {
  ModelDesc desc;
  if (!model || !args || model->abi_version != GROVE_ABI_VERSION ||
      !model->descriptor)
    return;
  // Called before the failure is recorded: that message replaces any
  // parseDescriptor leaves.
  if (parseDescriptor(model->descriptor, desc) != GROVE_OK ||
      index >= desc.entries.size())
    return;
  const EntryDesc &entry = desc.entries[index];
  for (size_t k = 0; k < entry.outputs.size(); ++k)
    if (auto **slot =
            static_cast<DLManagedTensor **>(args[entry.inputs.size() + k]))
      *slot = nullptr;
}

grove_status rtInvoke(grove_context *ctx, const grove_model_def *model,
                      uint32_t index, void **args) {
  if (!ctx) {
    clearOutputSlots(model, index, args);
    return fail(GROVE_ERROR_INVALID_ARGUMENT, "grove_rt_invoke: ctx is NULL");
  }
  if (!model)
    return fail(GROVE_ERROR_INVALID_ARGUMENT, "grove_rt_invoke: model is NULL");
  if (ctx->model != model) {
    // Compare definitions by address: two libraries may define models with
    // the same name but different code.
    char where[64];
    std::snprintf(where, sizeof(where), " (definitions %p and %p)",
                  static_cast<const void *>(ctx->model),
                  static_cast<const void *>(model));
    clearOutputSlots(model, index, args);
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_rt_invoke: context was created for model " +
                    quote(ctx->model->name) + ", not for model " +
                    quote(model->abi_version == GROVE_ABI_VERSION
                              ? model->name
                              : "(other ABI)") +
                    where);
  }
  if (index >= ctx->desc.entries.size())
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_rt_invoke: entry index " + std::to_string(index) +
                    " out of range (model " + quote(model->name) + " has " +
                    std::to_string(ctx->desc.entries.size()) + ")");
  const EntryDesc &entry = ctx->desc.entries[index];
  const size_t numIn = entry.inputs.size(), numOut = entry.outputs.size();
  if (!args && numIn + numOut > 0)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_rt_invoke: entry '" + entry.name + "': args is NULL");
  std::vector<const DLTensor *> inputs(numIn);
  std::vector<DLManagedTensor **> slots(numOut);
  for (size_t k = 0; k < numIn; ++k)
    inputs[k] = static_cast<const DLTensor *>(args[k]);
  for (size_t k = 0; k < numOut; ++k)
    slots[k] = static_cast<DLManagedTensor **>(args[numIn + k]);
  grove_status s = Invocation(*ctx, index).run(inputs.data(), slots.data());
  if (s != GROVE_OK)
    return fail(s, "grove_rt_invoke: model '" + ctx->desc.module + "' " +
                       grove_last_error());
  return s;
}

grove_status invokeByName(grove_context *ctx, const char *name,
                          const DLTensor *const *inputs, size_t numInputs,
                          DLManagedTensor **outputs, size_t numOutputs) {
  // Callers may rely on NULL slots after a failure: as many as the entry
  // has, at most as many as the caller claims (the array may be shorter
  // than either); without the entry, the caller's count is all there is.
  auto clearSlots = [&](size_t count) {
    if (outputs)
      for (size_t k = 0; k < std::min(count, numOutputs); ++k)
        outputs[k] = nullptr;
  };
  if (!ctx || !name) {
    clearSlots(numOutputs);
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_invoke: ctx or entry name is NULL");
  }
  uint32_t index = 0;
  while (index < ctx->desc.entries.size() &&
         ctx->desc.entries[index].name != name)
    ++index;
  if (index == ctx->desc.entries.size()) {
    clearSlots(numOutputs);
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_invoke: model '" + ctx->desc.module +
                    "' has no entry '" + name + "'");
  }
  const EntryDesc &entry = ctx->desc.entries[index];
  clearSlots(entry.outputs.size());
  if (numInputs != entry.inputs.size() || numOutputs != entry.outputs.size())
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_invoke: entry '" + entry.name + "' takes " +
                    std::to_string(entry.inputs.size()) + " inputs and " +
                    std::to_string(entry.outputs.size()) + " outputs, got " +
                    std::to_string(numInputs) + " and " +
                    std::to_string(numOutputs));
  if ((!inputs && numInputs > 0) || (!outputs && numOutputs > 0))
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_invoke: entry '" + entry.name +
                    "': inputs or outputs array is NULL");
  std::vector<DLManagedTensor **> slots(numOutputs);
  for (size_t k = 0; k < numOutputs; ++k)
    slots[k] = &outputs[k];
  grove_status s = Invocation(*ctx, index).run(inputs, slots.data());
  if (s != GROVE_OK)
    return fail(s, "grove_invoke: model '" + ctx->desc.module + "' " +
                       grove_last_error());
  return s;
}

} // namespace

extern "C" {

GROVE_API int32_t grove_rt_invoke(struct grove_context *ctx,
                                  const grove_model_def *model, uint32_t entry,
                                  void **args) {
  return guarded("grove_rt_invoke",
                 [&] { return rtInvoke(ctx, model, entry, args); });
}

GROVE_API grove_status grove_invoke(grove_context *ctx, const char *entry,
                                    const DLTensor *const *inputs,
                                    size_t num_inputs,
                                    DLManagedTensor **outputs,
                                    size_t num_outputs) {
  return guarded("grove_invoke", [&] {
    return invokeByName(ctx, entry, inputs, num_inputs, outputs, num_outputs);
  });
}

} // extern "C"
