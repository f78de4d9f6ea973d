//===- Collectives.cpp - The communicator's C API and services ------------===//
//
// The C functions of runtime.h that make and use a grove_comm, and the
// collective services generated code calls (abi.h): they run on the current
// call's context's communicator, or, without one, on a world of this process
// alone, where every collective leaves its data as it is (a sum or a mean of
// one, a gather of one).
//
//===----------------------------------------------------------------------===//

#include "Agreement.h"
#include "Communicator.h"

#include "Context.h"
#include "DType.h"
#include "Error.h"
#include "Memory.h"
#include "Services.h"
#include "Tensor.h"
#include "Trace.h"

#include "grove/abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

using namespace grove::rt;

size_t grove::rt::wireTypeBytes(WireType type) {
  switch (type) {
  case WireType::F32:
  case WireType::I32:
    return 4;
  case WireType::F64:
    return 8;
  case WireType::F16:
  case WireType::BF16:
    return 2;
  }
  return 1;
}

uint64_t grove::rt::hostIdentity() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (const char *c = name; *c; ++c)
    h = (h ^ uint8_t(*c)) * 1099511628211ull;
  return h;
}

std::string Communicator::failure() const {
  std::lock_guard<std::mutex> hold(lock);
  return failed;
}

CommCounters Communicator::counters() const {
  std::lock_guard<std::mutex> hold(lock);
  return totals;
}

void Communicator::recordFailure(std::string message) {
  std::lock_guard<std::mutex> hold(lock);
  if (failed.empty())
    failed = std::move(message);
}

void Communicator::setRefusal(std::string message) {
  std::lock_guard<std::mutex> hold(lock);
  refused = std::move(message);
}

std::string Communicator::refusal() const {
  std::lock_guard<std::mutex> hold(lock);
  return refused;
}

void Communicator::addWaitSeconds(double waited) {
  std::lock_guard<std::mutex> hold(lock);
  totals.waitSeconds += waited;
}

void Communicator::count(uint64_t bytes, double waited) {
  std::lock_guard<std::mutex> hold(lock);
  totals.payloadBytes += bytes;
  totals.collectives += 1;
  totals.waitSeconds += waited;
}

PendingCollective::PendingCollective(const void *from, int64_t count,
                                     WireType type, Reduction reduction)
    : bytes(static_cast<const char *>(from),
            static_cast<const char *>(from) + count * wireTypeBytes(type)),
      elements(count), wireType(type), kind(reduction) {}

PendingCollective::PendingCollective(const void *from, int64_t count,
                                     WireType type, int world)
    : bytes(static_cast<const char *>(from),
            static_cast<const char *>(from) + count * wireTypeBytes(type)),
      gathered(size_t(count * world) * wireTypeBytes(type)), elements(count),
      wireType(type), gather(true), world(world) {}

Outcome Outcome::of(bool ok) {
  Outcome outcome;
  outcome.ok = ok;
  if (!ok && !takeServiceError(outcome.message, outcome.status))
    outcome.message = "failed";
  return outcome;
}

bool Outcome::report() const {
  if (!ok)
    reportServiceError(message.c_str(), status);
  return ok;
}

void PendingCollective::finish(Outcome result) {
  {
    std::lock_guard<std::mutex> hold(lock);
    done = true;
    outcome = std::move(result);
  }
  ready.notify_all();
}

bool PendingCollective::wait() {
  std::unique_lock<std::mutex> hold(lock);
  // Bounded: the transport finishes every collective by its deadline.
  ready.wait(hold, [&] { return done; });
  return outcome.report();
}

void Communicator::start(std::shared_ptr<PendingCollective> pending,
                         const char *what) {
  pending->finish(Outcome::of(
      pending->isGather()
          ? allGather(pending->data(), pending->result(), pending->count(),
                      pending->type(), what)
          : allReduce(pending->data(), pending->count(), pending->type(),
                      pending->reduction(), what)));
}

namespace {

/// A descriptor tensor as the agreement shows it: `x f32[?, 64]`.
std::string describeTensor(const TensorDesc &t) {
  return t.name + " " + dtypeName(t.dtype) +
         shapeString(t.shape.data(), t.shape.size());
}

/// The items a call of `entry` agrees on whatever its inputs: that it is
/// a call of this entry (agreeing before every call or the first only),
/// the runtime, the model, the entry, how its collectives were compiled
/// and which they are.
std::vector<AgreementItem> entryItems(const ModelDesc &model,
                                      const EntryDesc &entry, bool everyCall) {
  std::string state = "module '" + model.module + "' for " + model.target;
  for (const StateDesc &p : model.params) {
    state += "\n" + describeTensor(p);
    if (p.kind == StateKind::Initialized)
      state += " from bits " + std::to_string(p.initBits);
  }
  std::string signature = "entry '" + entry.name + "'";
  for (const TensorDesc &t : entry.inputs) {
    signature += "\ninput " + describeTensor(t);
    for (const Precondition &p : t.preconditions)
      signature += std::string(" ") + grove::schema::preconditionKind(p);
  }
  for (const TensorDesc &t : entry.outputs)
    signature += "\noutput " + describeTensor(t);
  // grove-insert-collectives{a=1 b=2}: an option a line.
  std::string config = entry.collectives.config;
  size_t open = config.find('{');
  if (open != std::string::npos && config.back() == '}')
    config = config.substr(open + 1, config.size() - open - 2);
  std::replace(config.begin(), config.end(), ' ', '\n');
  std::string ops;
  for (const std::string &op : entry.collectives.ops)
    ops += (ops.empty() ? "" : "\n") + op;
  // In the order that names the cause best: a compressor that differs
  // changes the state and the collectives too.
  const char *rebuild = "Compile one library for every rank";
  return {operationItem("a call of entry '" + entry.name +
                        (everyCall ? "', agreeing before every call"
                                   : "', agreeing before its first call only "
                                     "(GROVE_COMM_AGREE=first)")),
          runtimeItem(),
          {"the data-parallel options (grove-insert-collectives)", "", config,
           rebuild},
          {"the model", "", state, rebuild},
          {"the entry's signature", "", signature, rebuild},
          {"the collectives", "collective", ops, rebuild}};
}

/// What a context keeps for its collectives: the communicator it was
/// given, and what each entry's calls agree on before they run.
struct CommService final : Service {
  CommService(grove_comm *comm, const ModelDesc &model)
      : comm(comm), agreed(model.entries.size()) {
    // Read on every rank alike, and agreed on (entryItems): a rank that
    // skipped an agreement another makes would exchange apart.
    const char *when = std::getenv("GROVE_COMM_AGREE");
    everyCall = !when || std::string(when) != "first";
    for (const EntryDesc &entry : model.entries)
      items.push_back(entry.collectives.ops.empty()
                          ? std::vector<AgreementItem>()
                          : entryItems(model, entry, everyCall));
  }
  grove_comm *comm;
  /// Per entry; empty for an entry that runs no collective.
  std::vector<std::vector<AgreementItem>> items;
  /// Per entry: whether a call agreed already (GROVE_COMM_AGREE=first
  /// agrees on each entry's first call only).
  std::vector<std::atomic<bool>> agreed;
  bool everyCall = true;
};

const char kCommServiceKey = 0;

/// The element type of a DLTensor the app's collectives accept.
bool wireTypeOf(const DLDataType &dtype, WireType &type) {
  if (dtype.lanes != 1)
    return false;
  if (dtype.code == kDLFloat && dtype.bits == 32)
    type = WireType::F32;
  else if (dtype.code == kDLFloat && dtype.bits == 64)
    type = WireType::F64;
  else if (dtype.code == kDLFloat && dtype.bits == 16)
    type = WireType::F16;
  else if (dtype.code == kDLBfloat && dtype.bits == 16)
    type = WireType::BF16;
  else if (dtype.code == kDLInt && dtype.bits == 32)
    type = WireType::I32;
  else
    return false;
  return true;
}

/// The elements of a contiguous host tensor, or -1 with the error recorded.
int64_t contiguousCount(const DLTensor *t, const char *function) {
  if (!t || !t->data || t->ndim < 0 || (t->ndim > 0 && !t->shape)) {
    fail(GROVE_ERROR_INVALID_ARGUMENT,
         std::string(function) + ": NULL or malformed tensor");
    return -1;
  }
  if (t->device.device_type != kDLCPU) {
    fail(GROVE_ERROR_INVALID_ARGUMENT,
         std::string(function) + ": the tensor is not in host memory");
    return -1;
  }
  int64_t count = 1, expected = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] < 0) {
      fail(GROVE_ERROR_INVALID_ARGUMENT,
           std::string(function) + ": negative size");
      return -1;
    }
    if (t->strides && t->shape[d] > 1 && t->strides[d] != expected) {
      fail(GROVE_ERROR_INVALID_ARGUMENT,
           std::string(function) + ": the tensor is not contiguous");
      return -1;
    }
    expected *= t->shape[d];
    count *= t->shape[d];
  }
  return count;
}

grove_status takeFailure(const char *function) {
  std::string message;
  grove_status status = GROVE_ERROR_PEER;
  if (!takeServiceError(message, status))
    message = "failed";
  return fail(status, std::string(function) + ": " + message);
}

/// The contiguous rank-1 buffer of a service call, or null (a service
/// error) for a strided one: grove's bufferization hands contiguous ones.
template <typename Memref> void *contiguous(const Memref *m, const char *what) {
  if (m->sizes[0] > 1 && m->strides[0] != 1) {
    reportServiceError(
        (std::string(what) + ": the buffer is not contiguous").c_str(),
        GROVE_ERROR_INTERNAL);
    return nullptr;
  }
  return m->aligned + m->offset;
}

// Each service returns false when it failed (with a service error
// pending); the C entry points then abandon the call (CurrentCall.h), so
// that a failed collective leaves state as before it.

template <typename Memref>
bool allReduceService(Memref *buffer, WireType type, int32_t reduction) {
  Communicator *comm = currentCommunicator();
  void *data = contiguous(buffer, "grove.all_reduce");
  if (!comm || !data)
    return data != nullptr;
  return comm->allReduce(data, buffer->sizes[0], type, Reduction(reduction),
                         "grove.all_reduce");
}

/// The handle grove_rt_all_{reduce,gather}_start_* return: the pending
/// collective, owned by the handle until the wait takes it. 0 is no handle
/// (the start failed and said why).
using PendingHandle = std::shared_ptr<PendingCollective>;

/// The handles a call started and has not waited for (CurrentCall::state).
/// Starts outside calls (tests of the services alone) are not tracked.
struct StartedHandles final : CallState {
  std::vector<PendingHandle *> handles;
};
const char kStartedKey = 0;

/// Waits for and frees the collectives a call left behind: one abandoned
/// between a start and its wait (nothing then runs for it), or one whose
/// code never waited. Their failures come after the call's own.
void finishStartedHandles(CurrentCall &call, bool /*abandoned*/) {
  auto *started = static_cast<StartedHandles *>(call.findState(&kStartedKey));
  if (!started)
    return;
  std::vector<PendingHandle *> handles;
  handles.swap(started->handles);
  for (PendingHandle *handle : handles) {
    (*handle)->wait();
    delete handle;
  }
}
[[maybe_unused]] const bool kHooksAdded =
    addCallHooks({/*begin=*/nullptr, finishStartedHandles});

/// Starts `pending` on the current call's communicator, or finishes it in
/// a world of one (a mean of one, a gather of one), and returns its handle.
int64_t startService(std::shared_ptr<PendingCollective> pending,
                     const char *what) {
  if (Communicator *comm = currentCommunicator()) {
    comm->start(pending, what);
  } else {
    if (pending->isGather())
      std::memcpy(pending->result(), pending->data(),
                  size_t(pending->count()) * wireTypeBytes(pending->type()));
    pending->finish(Outcome());
  }
  auto handle = std::make_unique<PendingHandle>(std::move(pending));
  if (CurrentCall *call = currentCall()) {
    auto &started = call->state<StartedHandles>(&kStartedKey);
    started.handles.push_back(handle.get());
  }
  return reinterpret_cast<int64_t>(handle.release());
}

/// `start()`'s handle, or 0 with an out-of-memory service error: the copy
/// may not fit, and no exception may reach generated code.
template <typename Start> int64_t startOrOutOfMemory(const Start &start) {
  try {
    return start();
  } catch (const std::bad_alloc &) {
    reportServiceError("out of memory: cannot copy a collective's buffer",
                       GROVE_ERROR_OUT_OF_MEMORY);
    return 0;
  }
}

template <typename Memref>
int64_t allReduceStartService(const Memref *buffer, WireType type,
                              int32_t reduction) {
  const char *what = "grove.all_reduce_start";
  const void *data = contiguous(buffer, what);
  if (!data)
    return 0;
  return startOrOutOfMemory([&] {
    return startService(std::make_shared<PendingCollective>(
                            data, buffer->sizes[0], type, Reduction(reduction)),
                        what);
  });
}

template <typename Memref>
int64_t allGatherStartService(const Memref *buffer, WireType type) {
  const char *what = "grove.all_gather_start";
  const void *data = contiguous(buffer, what);
  if (!data)
    return 0;
  Communicator *comm = currentCommunicator();
  return startOrOutOfMemory([&] {
    return startService(
        std::make_shared<PendingCollective>(data, buffer->sizes[0], type,
                                            comm ? comm->size() : 1),
        what);
  });
}

template <typename Memref>
bool collectiveWaitService(int64_t handle, Memref *buffer, WireType type) {
  const char *what = "grove.collective_wait";
  if (!handle)
    return false; // the start failed
  auto *raw = reinterpret_cast<PendingHandle *>(handle);
  if (CurrentCall *call = currentCall())
    if (auto *started =
            static_cast<StartedHandles *>(call->findState(&kStartedKey)))
      started->handles.erase(
          std::remove(started->handles.begin(), started->handles.end(), raw),
          started->handles.end());
  std::unique_ptr<PendingHandle> owned(raw);
  PendingCollective &pending = **owned;
  void *data = contiguous(buffer, what);
  auto begin = std::chrono::steady_clock::now();
  bool done = pending.wait();
  if (Communicator *comm = currentCommunicator())
    comm->addWaitSeconds(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count());
  if (!done || !data)
    return false;
  if (pending.type() != type || pending.resultCount() != buffer->sizes[0]) {
    reportServiceError("grove.collective_wait: the result buffer does not "
                       "match the started collective",
                       GROVE_ERROR_INTERNAL);
    return false;
  }
  std::memcpy(data, pending.result(),
              size_t(pending.resultCount()) * wireTypeBytes(type));
  return true;
}

template <typename Memref>
bool allGatherService(const Memref *in, Memref *out, WireType type) {
  Communicator *comm = currentCommunicator();
  void *from = contiguous(in, "grove.all_gather");
  void *to = contiguous(out, "grove.all_gather");
  if (!from || !to)
    return false;
  int world = comm ? comm->size() : 1;
  if (out->sizes[0] != in->sizes[0] * world) {
    reportServiceError("grove.all_gather: the result buffer does not hold "
                       "one input per rank",
                       GROVE_ERROR_INTERNAL);
    return false;
  }
  if (!comm) {
    std::memmove(to, from, size_t(in->sizes[0]) * wireTypeBytes(type));
    return true;
  }
  return comm->allGather(from, to, in->sizes[0], type, "grove.all_gather");
}

template <typename Memref>
bool broadcastService(Memref *buffer, WireType type, int32_t root) {
  Communicator *comm = currentCommunicator();
  void *data = contiguous(buffer, "grove.broadcast");
  if (!comm || !data)
    return data != nullptr;
  if (root < 0 || root >= comm->size()) {
    reportServiceError(("grove.broadcast: root " + std::to_string(root) +
                        " is not a rank of " + std::to_string(comm->size()))
                           .c_str(),
                       GROVE_ERROR_INVALID_ARGUMENT);
    return false;
  }
  return comm->broadcast(data, buffer->sizes[0], type, root, "grove.broadcast");
}

} // namespace

/// What the ranks agree on that is this call's own: whether it was
/// accepted, and the shapes of its inputs. A forest's node arrays may
/// differ between ranks (their trees do); its roots, one per sample, may
/// not.
static void addCallItems(const EntryDesc &entry, const DLTensor *const *inputs,
                         grove_status local,
                         std::vector<AgreementItem> &items) {
  std::string message = local ? grove_last_error() : "";
  items.push_back({"whether each rank accepted its call", "",
                   local ? "refused it: " + message : "accepted it",
                   "No rank ran the call"});
  std::vector<bool> perTree(entry.inputs.size(), false);
  for (size_t k = 0; k < entry.inputs.size(); ++k) {
    if (const auto *forest = entry.inputs[k].find<ForestPrecondition>())
      perTree[k] = perTree[size_t(forest->children)] = true;
    if (entry.inputs[k].find<ForestNodesPrecondition>())
      perTree[k] = true;
  }
  std::string shapes;
  for (size_t k = 0; k < entry.inputs.size() && !local; ++k) {
    if (perTree[k])
      continue;
    const DLTensor &t = *inputs[k];
    shapes += (shapes.empty() ? "" : "\n") + entry.inputs[k].name + " " +
              dtypeName(t.dtype) + shapeString(t.shape, size_t(t.ndim));
  }
  items.push_back(
      {"the shapes of the inputs", "", shapes,
       "Every rank must feed a batch of one size: the averaged gradient is "
       "the mean of the ranks' means, which is the whole batch's only when "
       "the batches are equal (drop or pad a last, partial batch, as "
       "PyTorch's DistributedSampler does)"});
}

grove_status
grove::rt::agreeOnCall(grove_context &ctx, uint32_t index,
                       const DLTensor *const *inputs, grove_status local,
                       std::shared_ptr<PendingAgreement> *deferred) {
  auto *service =
      static_cast<CommService *>(ctx.services.find(&kCommServiceKey));
  if (!service || !service->comm || service->items[index].empty() ||
      (!service->everyCall && service->agreed[index].load()))
    return local;
  const EntryDesc &entry = ctx.desc.entries[index];
  std::string localMessage = local ? grove_last_error() : "";
  std::vector<AgreementItem> items = service->items[index];
  addCallItems(entry, inputs, local, items);
  Communicator &comm = *service->comm->impl;
  std::string prefix = comm.rankLabel() + ", before any collective ran: ";
  // Device collectives do not run where the host's do, so they could not
  // be refused: device contexts wait, as do calls refused here (they have
  // no code to run meanwhile).
  if (deferred && !local && !ctx.device && service->everyCall) {
    *deferred = startAgreement(comm, std::move(items), prefix);
    return GROVE_OK;
  }
  trace::Span span("collective", "agreement");
  comm.post([&comm] { comm.setRefusal(""); }); // as startAgreement's
  std::string disagreement;
  if (agree(comm, items, "the ranks' agreement before the call",
            disagreement)) {
    service->agreed[index] = !local;
    return local ? fail(local, localMessage) : GROVE_OK;
  }
  std::string exchangeError;
  grove_status exchangeStatus = GROVE_ERROR_PEER;
  if (disagreement.empty())
    takeServiceError(exchangeError, exchangeStatus);
  if (local)
    return fail(local, localMessage + (disagreement.empty()
                                           ? ""
                                           : " (so no rank runs the call)"));
  if (disagreement.empty())
    return fail(exchangeStatus, "entry '" + entry.name + "': " + exchangeError);
  return fail(GROVE_ERROR_PEER,
              "entry '" + entry.name + "': " + prefix + disagreement);
}

namespace {

/// A call's started agreement (adoptAgreement), settled once: before the
/// state writes, or when the call ends.
struct AgreementCallState final : CallState {
  std::shared_ptr<PendingAgreement> pending;
  Communicator *comm = nullptr;
  bool settled = false;
};
const char kAgreementKey = 0;

void settleAgreement(CurrentCall &call) {
  auto *state =
      static_cast<AgreementCallState *>(call.findState(&kAgreementKey));
  if (!state || state->settled)
    return;
  state->settled = true;
  std::string message;
  grove_status status = GROVE_OK;
  trace::Span span("collective", "agreement_wait");
  if (!state->pending->wait(message, status))
    call.fail(status, message);
}

void endAgreement(CurrentCall &call, bool /*abandoned*/) {
  settleAgreement(call);
  if (auto *state =
          static_cast<AgreementCallState *>(call.findState(&kAgreementKey)))
    // After the call's collectives (refused or not): the next call, or the
    // application's own collectives, run again.
    state->comm->post([comm = state->comm] { comm->setRefusal(""); });
}

[[maybe_unused]] const bool kAgreementHooksAdded = addCallHooks(
    {/*begin=*/nullptr, endAgreement, /*beforeWrites=*/settleAgreement});

} // namespace

void grove::rt::adoptAgreement(CurrentCall &call,
                               std::shared_ptr<PendingAgreement> agreement) {
  Communicator *comm = currentCommunicator();
  auto &state = call.state<AgreementCallState>(&kAgreementKey);
  state.pending = std::move(agreement);
  state.comm = comm;
}

Communicator *grove::rt::currentCommunicator() {
  const CurrentCall *call = currentCall();
  if (!call)
    return nullptr;
  auto *service = static_cast<CommService *>(
      call->context().services.find(&kCommServiceKey));
  return service && service->comm ? service->comm->impl.get() : nullptr;
}

/// Leaves the current call with the failure a service recorded (services.def:
/// the collectives' families ABANDON). Returns outside calls.
static void abandonCurrentCall() {
  if (CurrentCall *call = currentCall())
    call->abandon();
}

/// A trace span of collective `name` over `buffer`, with its bytes.
#define GROVE_COLLECTIVE_SPAN(name, buffer)                                    \
  grove::rt::trace::Span span("collective", name);                             \
  span.arg("bytes", (buffer)->sizes[0] * int64_t(sizeof(*(buffer)->aligned)))

#define GROVE_COLLECTIVE_SERVICES(SUFFIX, MEMREF, TYPE)                        \
  extern "C" GROVE_API void _mlir_ciface_grove_rt_all_reduce_##SUFFIX(         \
      MEMREF *buffer, int32_t reduction) {                                     \
    GROVE_COLLECTIVE_SPAN("all_reduce", buffer);                               \
    if (!allReduceService(buffer, TYPE, reduction))                            \
      abandonCurrentCall();                                                    \
  }                                                                            \
  extern "C" GROVE_API void _mlir_ciface_grove_rt_all_gather_##SUFFIX(         \
      const MEMREF *in, MEMREF *out) {                                         \
    GROVE_COLLECTIVE_SPAN("all_gather", out);                                  \
    if (!allGatherService(in, out, TYPE))                                      \
      abandonCurrentCall();                                                    \
  }                                                                            \
  extern "C" GROVE_API void _mlir_ciface_grove_rt_broadcast_##SUFFIX(          \
      MEMREF *buffer, int32_t root) {                                          \
    GROVE_COLLECTIVE_SPAN("broadcast", buffer);                                \
    if (!broadcastService(buffer, TYPE, root))                                 \
      abandonCurrentCall();                                                    \
  }                                                                            \
  extern "C" GROVE_API int64_t                                                 \
      _mlir_ciface_grove_rt_all_reduce_start_##SUFFIX(const MEMREF *buffer,    \
                                                      int32_t reduction) {     \
    GROVE_COLLECTIVE_SPAN("all_reduce_start", buffer);                         \
    int64_t handle = allReduceStartService(buffer, TYPE, reduction);           \
    if (!handle)                                                               \
      abandonCurrentCall();                                                    \
    return handle;                                                             \
  }                                                                            \
  extern "C" GROVE_API int64_t                                                 \
      _mlir_ciface_grove_rt_all_gather_start_##SUFFIX(const MEMREF *buffer) {  \
    GROVE_COLLECTIVE_SPAN("all_gather_start", buffer);                         \
    int64_t handle = allGatherStartService(buffer, TYPE);                      \
    if (!handle)                                                               \
      abandonCurrentCall();                                                    \
    return handle;                                                             \
  }                                                                            \
  extern "C" GROVE_API void _mlir_ciface_grove_rt_collective_wait_##SUFFIX(    \
      int64_t handle, MEMREF *buffer) {                                        \
    GROVE_COLLECTIVE_SPAN("collective_wait", buffer);                          \
    if (!collectiveWaitService(handle, buffer, TYPE))                          \
      abandonCurrentCall();                                                    \
  }
GROVE_COLLECTIVE_SERVICES(f32, grove_memref_f32_1, WireType::F32)
GROVE_COLLECTIVE_SERVICES(f64, grove_memref_f64_1, WireType::F64)
GROVE_COLLECTIVE_SERVICES(f16, grove_memref_u16_1, WireType::F16)
GROVE_COLLECTIVE_SERVICES(bf16, grove_memref_u16_1, WireType::BF16)
GROVE_COLLECTIVE_SERVICES(i32, grove_memref_i32_1, WireType::I32)
#undef GROVE_COLLECTIVE_SERVICES
#undef GROVE_COLLECTIVE_SPAN

namespace {

/// A key whose unsigned order is the magnitude order of T: the bits
/// without the sign (IEEE magnitudes order as integers), every NaN one key
/// above infinity.
template <typename T> struct MagnitudeKey;
template <> struct MagnitudeKey<float> {
  using Key = uint32_t;
  static Key of(float x) {
    Key bits;
    std::memcpy(&bits, &x, sizeof(bits));
    bits &= 0x7fffffffu;
    return bits > 0x7f800000u ? 0x7f800001u : bits;
  }
};
template <> struct MagnitudeKey<double> {
  using Key = uint64_t;
  static Key of(double x) {
    Key bits;
    std::memcpy(&bits, &x, sizeof(bits));
    bits &= 0x7fffffffffffffffull;
    return bits > 0x7ff0000000000000ull ? 0x7ff0000000000001ull : bits;
  }
};

/// The k elements of largest magnitude (NaN largest, ties to the lower
/// index), written in increasing index order. A selection over the keys
/// finds the k-th largest; one pass in index order then takes every key
/// above it and the first of those equal to it.
template <typename T, typename Memref>
void topK(const Memref *in, Memref *values, grove_memref_i32_1 *indices) {
  using Key = typename MagnitudeKey<T>::Key;
  const T *x = static_cast<const T *>(contiguous(in, "grove.top_k"));
  T *v = static_cast<T *>(contiguous(values, "grove.top_k"));
  auto *idx = static_cast<int32_t *>(contiguous(indices, "grove.top_k"));
  if (!x || !v || !idx)
    return;
  int64_t n = in->sizes[0], k = values->sizes[0];
  if (k > n || indices->sizes[0] != k || n > INT32_MAX) {
    reportServiceError("grove.top_k: k exceeds the input's size",
                       GROVE_ERROR_INVALID_ARGUMENT);
    return;
  }
  if (k == 0)
    return;
  std::vector<Key> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    keys[size_t(i)] = MagnitudeKey<T>::of(x[i]);
  std::vector<Key> order(keys);
  std::nth_element(order.begin(), order.begin() + (k - 1), order.end(),
                   std::greater<Key>());
  const Key threshold = order[size_t(k - 1)];
  int64_t above = 0;
  for (Key key : keys)
    above += key > threshold;
  int64_t ties = k - above, j = 0;
  for (int64_t i = 0; i < n && j < k; ++i) {
    Key key = keys[size_t(i)];
    if (key > threshold || (key == threshold && ties-- > 0)) {
      idx[j] = int32_t(i);
      v[j++] = x[i];
    }
  }
}

} // namespace

extern "C" GROVE_API void
_mlir_ciface_grove_rt_top_k_f32(const grove_memref_f32_1 *in,
                                grove_memref_f32_1 *values,
                                grove_memref_i32_1 *indices) {
  topK<float>(in, values, indices);
}

extern "C" GROVE_API void
_mlir_ciface_grove_rt_top_k_f64(const grove_memref_f64_1 *in,
                                grove_memref_f64_1 *values,
                                grove_memref_i32_1 *indices) {
  topK<double>(in, values, indices);
}

extern "C" GROVE_API int64_t grove_rt_world_size(void) {
  Communicator *comm = currentCommunicator();
  return comm ? comm->size() : 1;
}

extern "C" GROVE_API int64_t grove_rt_world_rank(void) {
  Communicator *comm = currentCommunicator();
  return comm ? comm->rank() : 0;
}

extern "C" GROVE_API void grove_comm_options_init(grove_comm_options *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->timeout_seconds = 60;
  if (const char *env = std::getenv("GROVE_COMM_TIMEOUT")) {
    char *end = nullptr;
    double seconds = std::strtod(env, &end);
    if (end != env && *end == '\0' && seconds > 0)
      options->timeout_seconds = seconds;
  }
}

static grove_status createComm(const char *function, const void *mpiComm,
                               const grove_comm_options *options,
                               grove_comm **out) {
  return guarded(function, [&] {
    if (!out)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  std::string(function) + ": out_comm is NULL");
    *out = nullptr;
    grove_comm_options opts;
    grove_comm_options_init(&opts);
    if (options) {
      if (options->struct_size <
          offsetof(grove_comm_options, timeout_seconds) + sizeof(double))
        return fail(GROVE_ERROR_INVALID_ARGUMENT,
                    std::string(function) + ": options.struct_size is too "
                                            "small (use "
                                            "grove_comm_options_init)");
      opts.timeout_seconds = options->timeout_seconds;
    }
    if (!(opts.timeout_seconds > 0))
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  std::string(function) + ": timeout_seconds must be > 0");
    return createMpiCommunicator(mpiComm, opts, out);
  });
}

extern "C" GROVE_API grove_status
grove_comm_create(const grove_comm_options *options, grove_comm **out) {
  return createComm("grove_comm_create", nullptr, options, out);
}

extern "C" GROVE_API grove_status grove_comm_create_from_mpi(
    const void *mpiComm, const grove_comm_options *options, grove_comm **out) {
  if (!mpiComm)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_comm_create_from_mpi: mpi_comm is NULL");
  return createComm("grove_comm_create_from_mpi", mpiComm, options, out);
}

extern "C" GROVE_API int grove_comm_rank(const grove_comm *comm) {
  return comm ? comm->impl->rank() : 0;
}

extern "C" GROVE_API int grove_comm_size(const grove_comm *comm) {
  return comm ? comm->impl->size() : 1;
}

extern "C" GROVE_API void grove_comm_destroy(grove_comm *comm) { delete comm; }

extern "C" GROVE_API grove_status grove_comm_get_stats(const grove_comm *comm,
                                                       grove_comm_stats *out) {
  if (!comm || !out)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_comm_get_stats: NULL argument");
  CommCounters c = comm->impl->counters();
  *out = {c.payloadBytes, c.collectives, c.waitSeconds};
  return GROVE_OK;
}

extern "C" GROVE_API const char *
grove_comm_device_transport(const grove_comm *comm) {
  DeviceCollectives *device = comm ? comm->impl->device() : nullptr;
  return device ? device->transport().c_str() : "";
}

namespace {

/// An application's collective on `tensor`: its element count and wire
/// type, or a failure status (recorded) for a tensor it cannot take.
grove_status checkAppTensor(const DLTensor *tensor, const char *function,
                            int64_t &count, WireType &type) {
  count = contiguousCount(tensor, function);
  if (count < 0)
    return GROVE_ERROR_INVALID_ARGUMENT;
  if (!wireTypeOf(tensor->dtype, type))
    return fail(GROVE_ERROR_UNSUPPORTED,
                std::string(function) + ": unsupported dtype");
  return GROVE_OK;
}

/// Runs an application's collective once the ranks agree on what it is
/// (`what`: "all_reduce sum f32[10]") and that every rank accepted it
/// (`local`, whose failure is the last error); otherwise every rank fails
/// alike and nothing is exchanged but the agreement.
grove_status agreeAndRun(grove_comm &comm, const char *function,
                         grove_status local, const std::string &what,
                         const std::function<bool()> &run) {
  std::string localMessage = local ? grove_last_error() : "";
  std::vector<AgreementItem> items = {
      operationItem(function),
      {"the collective each rank called", "",
       local ? "refused: " + localMessage : what,
       "Every rank must call the same collectives, in one order, on tensors "
       "of one shape and type"}};
  std::string disagreement;
  bool agreed = agree(*comm.impl, items, function, disagreement);
  if (local) {
    // A failed exchange left its error pending: this call's is the caller's.
    clearServiceError();
    return fail(local, localMessage);
  }
  if (!agreed && disagreement.empty())
    return takeFailure(function);
  if (!agreed)
    return fail(GROVE_ERROR_PEER, std::string(function) + ": " +
                                      comm.impl->rankLabel() + ": " +
                                      disagreement);
  return run() ? GROVE_OK : takeFailure(function);
}

} // namespace

extern "C" GROVE_API grove_status grove_comm_all_reduce(grove_comm *comm,
                                                        DLTensor *tensor,
                                                        int op) {
  const char *function = "grove_comm_all_reduce";
  return guarded(function, [&] {
    if (!comm)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_comm_all_reduce: NULL communicator");
    WireType type = WireType::F32;
    int64_t count = 0;
    grove_status local =
        op != 0 && op != 1
            ? fail(GROVE_ERROR_INVALID_ARGUMENT,
                   "grove_comm_all_reduce: op is not 0 (sum) or 1 (mean)")
            : checkAppTensor(tensor, function, count, type);
    std::string what =
        local
            ? ""
            : std::string("all_reduce ") + (op ? "mean " : "sum ") +
                  dtypeName(tensor->dtype) + "[" + std::to_string(count) + "]";
    return agreeAndRun(*comm, function, local, what, [&] {
      auto *data = static_cast<char *>(tensor->data) + tensor->byte_offset;
      return comm->impl->allReduce(data, count, type, Reduction(op), function);
    });
  });
}

extern "C" GROVE_API grove_status grove_comm_broadcast(grove_comm *comm,
                                                       DLTensor *tensor,
                                                       int root) {
  const char *function = "grove_comm_broadcast";
  return guarded(function, [&] {
    if (!comm)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_comm_broadcast: NULL communicator");
    WireType type = WireType::F32;
    int64_t count = 0;
    grove_status local =
        root < 0 || root >= comm->impl->size()
            ? fail(GROVE_ERROR_INVALID_ARGUMENT,
                   "grove_comm_broadcast: root " + std::to_string(root) +
                       " is not a rank of " +
                       std::to_string(comm->impl->size()))
            : checkAppTensor(tensor, function, count, type);
    std::string what = local ? ""
                             : "broadcast from " + std::to_string(root) + " " +
                                   dtypeName(tensor->dtype) + "[" +
                                   std::to_string(count) + "]";
    return agreeAndRun(*comm, function, local, what, [&] {
      auto *data = static_cast<char *>(tensor->data) + tensor->byte_offset;
      return comm->impl->broadcast(data, count, type, root, function);
    });
  });
}

extern "C" GROVE_API grove_status grove_comm_barrier(grove_comm *comm) {
  return guarded("grove_comm_barrier", [&] {
    if (!comm)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_comm_barrier: NULL communicator");
    if (!comm->impl->barrier("grove_comm_barrier"))
      return takeFailure("grove_comm_barrier");
    return GROVE_OK;
  });
}

extern "C" GROVE_API grove_status grove_context_set_comm(grove_context *ctx,
                                                         grove_comm *comm) {
  return guarded("grove_context_set_comm", [&] {
    if (!ctx)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_context_set_comm: ctx is NULL");
    // Calls hold the state lock; attaching waits for them.
    std::unique_lock<std::shared_mutex> hold(ctx->stateLock);
    ctx->services.add(&kCommServiceKey,
                      std::make_unique<CommService>(comm, ctx->desc));
    return GROVE_OK;
  });
}
