//===- DeviceCollectives.cpp - Collectives on device memory ---------------===//
//
// grove_rt_cuda_{all_reduce,all_gather,broadcast}_<type> and the split
// grove_rt_cuda_{all_reduce,all_gather}_start_<type> and
// grove_rt_cuda_collective_wait_<type>: the collective services of models
// compiled with --target=cuda (grove-memref-to-gpu sends the host services'
// calls here), on buffers in device memory. They run on
// the communicator attached to the call's context through one of two
// transports, chosen when the first device collective runs (collectively:
// every rank reaches it at the same point of the same program):
//  - NCCL, bootstrapped over the host communicator (rank 0's unique id is
//    broadcast over MPI), on a stream of the communicator's (below);
//  - staged: the buffer goes to host memory, through the host
//    communicator's MPI collective, and back. Chosen when two ranks share
//    a GPU (NCCL refuses them) or some rank cannot load NCCL;
//    GROVE_DEVICE_COLLECTIVES=nccl|staged forces one.
// NCCL runs every collective on the communicator's own stream, in the order
// the services are called, each after the work the caller's stream had
// queued: two collectives on two streams could each wait for the other on
// different ranks. A blocking service waits for its collective; a start
// returns once its collective is queued (on a copy of the input), and the
// step's kernels queued before the wait run beside it.
// Deadlines: NCCL communicators are made non-blocking, so a collective that
// misses the host communicator's deadline (a dead or stalled peer) is
// aborted with ncclCommAbort, and the host communicator fails with the same
// message, naming the suspects: every later collective fails at once. To
// bound it, the host waits for each collective (in the blocking service or
// in the wait) before the caller's stream may use its result.
//
//===----------------------------------------------------------------------===//

#include "CudaContext.h"
#include "Nccl.h"

#include "Communicator.h"
#include "CurrentCall.h"
#include "Error.h"

#include "grove/abi.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <sched.h>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char *kTransportEnv = "GROVE_DEVICE_COLLECTIVES";
constexpr const char *kSetUp = "the device collectives' set-up";

/// Where a rank's GPU is; two ranks with the same one share a GPU.
struct GpuIdentity {
  uint64_t host;
  int32_t domain, bus, device, unused;
  bool operator==(const GpuIdentity &o) const {
    return host == o.host && domain == o.domain && bus == o.bus &&
           device == o.device;
  }
};
constexpr int64_t kIdentityWords = sizeof(GpuIdentity) / sizeof(int32_t);

/// False when the host communicator failed; its error failed the current
/// call already (there is one call and one failure for host and CUDA).
bool hostOk(bool ok) {
  if (ok)
    return true;
  if (!currentCallFailed())
    failCurrentCall(GROVE_ERROR_PEER, "the host communicator failed");
  return false;
}

/// Backs off like the host communicator's wait: spin, yield, then sleep.
void backOff(uint64_t spin) {
  if (spin < 256)
    return;
  if (spin < 4096)
    sched_yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(50));
}

class CudaCollectives final : public DeviceCollectives {
public:
  CudaCollectives(Communicator &host, CudaDevice &device)
      : host(host), device(device) {}
  ~CudaCollectives() override;
  const std::string &transport() const override { return description; }
  int ordinal() const { return device.ordinal(); }

  /// Chooses the transport and makes the NCCL communicator (collective).
  bool init();
  bool allReduce(CUdeviceptr data, int64_t count, WireType type,
                 Reduction reduction, CUstream stream, const char *what);
  bool allGather(CUdeviceptr in, CUdeviceptr out, int64_t count, WireType type,
                 CUstream stream, const char *what);
  bool broadcast(CUdeviceptr data, int64_t count, WireType type, int root,
                 CUstream stream, const char *what);
  /// Queue a collective, in place at `data` (a gather from `in` to `out`),
  /// after `stream`'s work; `done` fires when it is complete. The staged
  /// transport completes it here (`done` stays null).
  bool startAllReduce(CUdeviceptr data, int64_t count, WireType type,
                      Reduction reduction, CUstream stream, const char *what,
                      CUevent &done);
  bool startAllGather(CUdeviceptr in, CUdeviceptr out, int64_t count,
                      WireType type, CUstream stream, const char *what,
                      CUevent &done);
  /// Waits, with the deadline, for a started collective's `done` (then
  /// destroyed), and makes `stream`'s later work wait for it.
  bool wait(CUevent done, CUstream stream, const char *what, uint64_t bytes);

private:
  bool gpuIdentity(GpuIdentity &out);
  bool check(CUresult r, const char *what) {
    if (r == CUDA_SUCCESS)
      return true;
    failCurrentCall(statusOf(r),
                    std::string(what) + ": " + errorText(device.driver(), r));
    return false;
  }
  /// Ends the host communicator too: the peers are out of step now.
  void failBoth(grove_status status, const std::string &message) {
    host.recordFailure(message);
    failCurrentCall(status, message);
  }
  std::string rankText() const { return host.rankLabel() + ": "; }
  char *stage(size_t bytes) {
    if (staging.size() < bytes)
      staging.resize(bytes);
    return staging.data();
  }
  /// Copies `bytes` at `data` to the host once the stream's work is done.
  bool download(CUdeviceptr data, size_t bytes, CUstream stream, char *to);

  Communicator &host;
  CudaDevice &device;
  bool useNccl = false;
  std::string description;
  std::vector<char> staging;
#if GROVE_HAVE_NCCL
  bool initNccl();
  /// Queues `call(commStream)`, an NCCL collective, once `stream`'s work so
  /// far is done; `done` fires when the collective has.
  template <typename Call>
  bool launch(const Call &call, CUstream stream, const char *what,
              CUevent &done);
  /// Until `state` leaves ncclInProgress (a non-blocking communicator may
  /// still be queueing a launch, or connecting to its peers) or the
  /// deadline passes; any error aborts the communicator.
  bool settle(ncclResult_t state, const char *what);
  /// Waits for `done` with the deadline; aborts the communicator when it
  /// passes or NCCL reports an error.
  bool finish(CUevent done, const char *what, uint64_t bytes);
  /// A blocking collective: launch, finish, and `stream` waits for it.
  template <typename Call>
  bool complete(const Call &call, CUstream stream, const char *what,
                uint64_t bytes) {
    CUevent done = nullptr;
    return launch(call, stream, what, done) && wait(done, stream, what, bytes);
  }
  auto ncclAllReduceOf(CUdeviceptr data, int64_t count, WireType type,
                       Reduction reduction);
  auto ncclAllGatherOf(CUdeviceptr in, CUdeviceptr out, int64_t count,
                       WireType type);
  /// Fails both communicators after aborting NCCL's (which frees it:
  /// `comm` is null from then on).
  void abortWith(const std::string &message);
  /// Now plus the host communicator's timeout.
  Clock::time_point deadline() const {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(
               std::chrono::duration<double>(host.timeoutSeconds()));
  }
  /// Aborts: `what` `missed` (did not complete, ...) the deadline.
  void abortLate(const std::string &what, const char *missed) {
    abortWith(what + " " + missed + " within " +
              std::to_string(host.timeoutSeconds()) + " s: " + host.suspects());
  }
  /// False, failing the call, once NCCL's communicator was aborted: a
  /// started collective's wait then has nothing left to ask.
  bool usable(const char *what);
  ncclComm_t comm = nullptr;
  CUstream commStream = nullptr;
#endif
};

CudaCollectives::~CudaCollectives() {
#if GROVE_HAVE_NCCL
  if ((!comm && !commStream) || CudaDevice::exiting())
    return;
  CudaDevice::Scope scope(device);
  // A failed peer may never answer: abort rather than wait for it (an
  // aborted communicator is gone already).
  if (comm && host.failure().empty())
    nccl().ncclCommDestroy(comm);
  else if (comm)
    nccl().ncclCommAbort(comm);
  if (commStream)
    device.driver().cuStreamDestroy(commStream);
#endif
}

bool CudaCollectives::gpuIdentity(GpuIdentity &out) {
  const Driver &d = device.driver();
  out = {hostIdentity(), 0, 0, 0, 0};
  return check(d.cuDeviceGetAttribute(&out.domain,
                                      CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
                                      device.handle()),
               "reading the GPU's PCI address") &&
         check(d.cuDeviceGetAttribute(&out.bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
                                      device.handle()),
               "reading the GPU's PCI address") &&
         check(d.cuDeviceGetAttribute(&out.device,
                                      CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
                                      device.handle()),
               "reading the GPU's PCI address");
}

bool CudaCollectives::init() {
  const char *env = std::getenv(kTransportEnv);
  std::string forced = env ? env : "";
  if (!forced.empty() && forced != "nccl" && forced != "staged") {
    failBoth(GROVE_ERROR_INVALID_ARGUMENT,
             std::string(kTransportEnv) + "='" + forced +
                 "': expected 'nccl' or 'staged'");
    return false;
  }
  // Every rank takes part in both exchanges before any can decide.
  GpuIdentity self;
  if (!gpuIdentity(self))
    return false;
  std::vector<GpuIdentity> all(size_t(host.size()));
  if (!hostOk(host.allGather(&self, all.data(), kIdentityWords, WireType::I32,
                             kSetUp)))
    return false;
#if GROVE_HAVE_NCCL
  const std::string &loadError = nccl().error;
#else
  const std::string loadError = "the runtime was built without nccl.h";
#endif
  int32_t cannotLoad = loadError.empty() ? 0 : 1;
  if (!hostOk(host.allReduce(&cannotLoad, 1, WireType::I32, Reduction::Sum,
                             kSetUp)))
    return false;
  std::string shared;
  for (size_t a = 0; a < all.size() && shared.empty(); ++a)
    for (size_t b = a + 1; b < all.size() && shared.empty(); ++b)
      if (all[a] == all[b])
        shared = "ranks " + std::to_string(a) + " and " + std::to_string(b) +
                 " share a GPU, and NCCL needs one GPU a rank";
  std::string why;
  if (forced == "staged")
    why = std::string(kTransportEnv) + "=staged";
  else if (!shared.empty())
    why = shared;
  else if (cannotLoad)
    why = !loadError.empty()
              ? loadError
              : std::to_string(cannotLoad) + " rank(s) cannot load NCCL";
  if (!why.empty() && forced == "nccl") {
    failBoth(GROVE_ERROR_UNSUPPORTED,
             rankText() + kTransportEnv + "=nccl, but " + why);
    return false;
  }
  if (!why.empty()) {
    description = "staged: " + why;
    return true;
  }
#if GROVE_HAVE_NCCL
  description = "nccl";
  useNccl = true;
  return initNccl();
#else
  return false; // unreachable: cannotLoad is set above
#endif
}

bool CudaCollectives::download(CUdeviceptr data, size_t bytes, CUstream stream,
                               char *to) {
  const Driver &d = device.driver();
  return check(d.cuStreamSynchronize(stream),
               "waiting for the step's kernels") &&
         check(d.cuMemcpyDtoH(to, data, bytes), "copying to the host");
}

#if GROVE_HAVE_NCCL
ncclDataType_t ncclType(WireType type) {
  switch (type) {
  case WireType::F32:
    return ncclFloat32;
  case WireType::F64:
    return ncclFloat64;
  case WireType::F16:
    return ncclFloat16;
  case WireType::BF16:
    return ncclBfloat16;
  case WireType::I32:
    return ncclInt32;
  }
  return ncclInt8;
}

/// The launches of the NCCL collectives the services share, for launch().
auto CudaCollectives::ncclAllReduceOf(CUdeviceptr data, int64_t count,
                                      WireType type, Reduction reduction) {
  return [this, data, count, type, reduction](CUstream on) {
    return nccl().ncclAllReduce(
        reinterpret_cast<void *>(data), reinterpret_cast<void *>(data),
        size_t(count), ncclType(type),
        reduction == Reduction::Mean ? ncclAvg : ncclSum, comm, on);
  };
}

auto CudaCollectives::ncclAllGatherOf(CUdeviceptr in, CUdeviceptr out,
                                      int64_t count, WireType type) {
  return [this, in, out, count, type](CUstream on) {
    return nccl().ncclAllGather(reinterpret_cast<void *>(in),
                                reinterpret_cast<void *>(out), size_t(count),
                                ncclType(type), comm, on);
  };
}

bool CudaCollectives::initNccl() {
  const NcclApi &api = nccl();
  // Made first: once every rank's NCCL communicator exists, none may fail
  // alone without ending the host communicator too.
  if (CUresult r =
          device.driver().cuStreamCreate(&commStream, CU_STREAM_NON_BLOCKING);
      r != CUDA_SUCCESS) {
    failBoth(statusOf(r), rankText() + "creating the collectives' stream: " +
                              errorText(device.driver(), r));
    return false;
  }
  // Rank 0's id, or its failure, reaches every rank: none is left waiting.
  struct {
    int32_t status;
    ncclUniqueId id;
  } root{};
  static_assert(sizeof(root) % sizeof(int32_t) == 0, "sent as i32 words");
  if (host.rank() == 0)
    root.status = int32_t(api.ncclGetUniqueId(&root.id));
  if (!hostOk(host.broadcast(&root, sizeof(root) / sizeof(int32_t),
                             WireType::I32, 0, kSetUp)))
    return false;
  if (root.status != ncclSuccess) {
    failBoth(GROVE_ERROR_INTERNAL,
             rankText() + "NCCL on rank 0 could not make a unique id: " +
                 ncclText(ncclResult_t(root.status)));
    return false;
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t r = api.ncclCommInitRankConfig(&comm, host.size(), root.id,
                                              host.rank(), &config);
  auto until = deadline();
  for (uint64_t spin = 0; r == ncclInProgress; ++spin) {
    if (Clock::now() > until) {
      abortLate("NCCL's communicator", "was not made");
      return false;
    }
    backOff(spin);
    api.ncclCommGetAsyncError(comm, &r);
  }
  if (r != ncclSuccess) {
    failBoth(GROVE_ERROR_PEER,
             rankText() +
                 "making NCCL's communicator failed: " + ncclText(r, comm));
    return false;
  }
  return true;
}

void CudaCollectives::abortWith(const std::string &message) {
  // The message first: ncclText reads the communicator the abort frees.
  std::string text = rankText() + message;
  nccl().ncclCommAbort(comm);
  comm = nullptr;
  failBoth(GROVE_ERROR_PEER, text);
}

bool CudaCollectives::usable(const char *what) {
  if (comm)
    return true;
  failCurrentCall(GROVE_ERROR_PEER,
                  std::string(what) +
                      ": the communicator failed before: " + host.failure());
  return false;
}

bool CudaCollectives::settle(ncclResult_t state, const char *what) {
  const NcclApi &api = nccl();
  auto until = deadline();
  for (uint64_t spin = 0; state == ncclInProgress; ++spin) {
    if ((spin & 63) == 0 && Clock::now() > until) {
      abortLate(what, "was not queued");
      return false;
    }
    backOff(spin);
    api.ncclCommGetAsyncError(comm, &state);
  }
  if (state == ncclSuccess)
    return true;
  // NCCL's communicator is unusable after an asynchronous error.
  abortWith(std::string(what) + " failed in NCCL: " + ncclText(state, comm));
  return false;
}

template <typename Call>
bool CudaCollectives::launch(const Call &call, CUstream stream,
                             const char *what, CUevent &done) {
  const Driver &d = device.driver();
  // Both events exist before the collective is queued: nothing that can
  // fail alone comes after it but recording `done`.
  CUevent ready = nullptr;
  if (!check(d.cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING), what))
    return false;
  if (!check(d.cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), what)) {
    d.cuEventDestroy(ready);
    done = nullptr;
    return false;
  }
  bool ordered = check(d.cuEventRecord(ready, stream), what) &&
                 check(d.cuStreamWaitEvent(commStream, ready, 0), what);
  // Released once it has fired; the stream's wait stays queued.
  d.cuEventDestroy(ready);
  if (ordered && settle(call(commStream), what)) {
    CUresult r = d.cuEventRecord(done, commStream);
    if (r == CUDA_SUCCESS)
      return true;
    // Queued but untrackable: nothing could wait for it with a deadline.
    abortWith(std::string(what) + ": " + errorText(d, r));
  }
  d.cuEventDestroy(done);
  done = nullptr;
  return false;
}

bool CudaCollectives::finish(CUevent done, const char *what, uint64_t bytes) {
  const NcclApi &api = nccl();
  const Driver &d = device.driver();
  auto start = Clock::now();
  auto until = deadline();
  for (uint64_t spin = 0;; ++spin) {
    ncclResult_t state = ncclSuccess;
    api.ncclCommGetAsyncError(comm, &state);
    if (state != ncclSuccess && state != ncclInProgress) {
      abortWith(std::string(what) +
                " failed in NCCL: " + ncclText(state, comm));
      return false;
    }
    CUresult r = d.cuEventQuery(done);
    if (r == CUDA_SUCCESS) {
      host.count(bytes,
                 std::chrono::duration<double>(Clock::now() - start).count());
      return true;
    }
    if (r != CUDA_ERROR_NOT_READY)
      return check(r, what);
    if ((spin & 63) == 0 && Clock::now() > until) {
      abortLate(what, "did not complete");
      return false;
    }
    backOff(spin);
  }
}
#endif // GROVE_HAVE_NCCL

bool CudaCollectives::allReduce(CUdeviceptr data, int64_t count, WireType type,
                                Reduction reduction, CUstream stream,
                                const char *what) {
  size_t bytes = size_t(count) * wireTypeBytes(type);
#if GROVE_HAVE_NCCL
  if (useNccl)
    return complete(ncclAllReduceOf(data, count, type, reduction), stream, what,
                    bytes);
#endif
  char *buffer = stage(bytes);
  return download(data, bytes, stream, buffer) &&
         hostOk(host.allReduce(buffer, count, type, reduction, what)) &&
         check(device.driver().cuMemcpyHtoD(data, buffer, bytes),
               "copying to the device");
}

bool CudaCollectives::allGather(CUdeviceptr in, CUdeviceptr out, int64_t count,
                                WireType type, CUstream stream,
                                const char *what) {
  size_t bytes = size_t(count) * wireTypeBytes(type);
#if GROVE_HAVE_NCCL
  if (useNccl)
    return complete(ncclAllGatherOf(in, out, count, type), stream, what, bytes);
#endif
  char *buffer = stage(bytes * size_t(host.size() + 1));
  char *gathered = buffer + bytes;
  return download(in, bytes, stream, buffer) &&
         hostOk(host.allGather(buffer, gathered, count, type, what)) &&
         check(device.driver().cuMemcpyHtoD(out, gathered,
                                            bytes * size_t(host.size())),
               "copying to the device");
}

bool CudaCollectives::broadcast(CUdeviceptr data, int64_t count, WireType type,
                                int root, CUstream stream, const char *what) {
  size_t bytes = size_t(count) * wireTypeBytes(type);
#if GROVE_HAVE_NCCL
  if (useNccl)
    return complete(
        [&](CUstream on) {
          return nccl().ncclBroadcast(
              reinterpret_cast<void *>(data), reinterpret_cast<void *>(data),
              size_t(count), ncclType(type), root, comm, on);
        },
        stream, what, host.rank() == root ? bytes : 0);
#endif
  char *buffer = stage(bytes);
  return download(data, bytes, stream, buffer) &&
         hostOk(host.broadcast(buffer, count, type, root, what)) &&
         check(device.driver().cuMemcpyHtoD(data, buffer, bytes),
               "copying to the device");
}

bool CudaCollectives::startAllReduce(CUdeviceptr data, int64_t count,
                                     WireType type, Reduction reduction,
                                     CUstream stream, const char *what,
                                     CUevent &done) {
#if GROVE_HAVE_NCCL
  if (useNccl)
    return launch(ncclAllReduceOf(data, count, type, reduction), stream, what,
                  done);
#endif
  (void)done; // the staged transport completes it here
  return allReduce(data, count, type, reduction, stream, what);
}

bool CudaCollectives::startAllGather(CUdeviceptr in, CUdeviceptr out,
                                     int64_t count, WireType type,
                                     CUstream stream, const char *what,
                                     CUevent &done) {
#if GROVE_HAVE_NCCL
  if (useNccl)
    return launch(ncclAllGatherOf(in, out, count, type), stream, what, done);
#endif
  (void)done; // the staged transport completes it here
  return allGather(in, out, count, type, stream, what);
}

bool CudaCollectives::wait(CUevent done, CUstream stream, const char *what,
                           uint64_t bytes) {
  if (!done)
    return true; // completed when it started
#if GROVE_HAVE_NCCL
  const Driver &d = device.driver();
  bool ok = usable(what) && finish(done, what, bytes) &&
            check(d.cuStreamWaitEvent(stream, done, 0), what);
  d.cuEventDestroy(done);
  return ok;
#else
  (void)stream, (void)what, (void)bytes;
  return true; // unreachable: only NCCL leaves an event
#endif
}

/// The device collectives of `host` on the call's GPU, made on first use.
CudaCollectives *collectivesFor(Communicator &host, CudaContext &ctx,
                                const char *what) {
  // Contexts on several threads may share a communicator.
  static std::mutex making;
  std::lock_guard<std::mutex> hold(making);
  std::string failed = host.failure();
  if (!failed.empty()) {
    failCurrentCall(GROVE_ERROR_PEER, std::string(what) +
                                          ": the communicator failed "
                                          "before: " +
                                          failed);
    return nullptr;
  }
  if (auto *made = static_cast<CudaCollectives *>(host.device())) {
    if (made->ordinal() == ctx.cudaDevice().ordinal())
      return made;
    failCurrentCall(GROVE_ERROR_UNSUPPORTED,
                    std::string(what) +
                        ": the communicator serves CUDA "
                        "device " +
                        std::to_string(made->ordinal()) +
                        "; a communicator serves one GPU (this call is on "
                        "device " +
                        std::to_string(ctx.cudaDevice().ordinal()) + ")");
    return nullptr;
  }
  auto made = std::make_unique<CudaCollectives>(host, ctx.cudaDevice());
  if (!made->init())
    return nullptr;
  CudaCollectives *result = made.get();
  host.setDevice(std::move(made));
  return result;
}

/// The call's context and the device address of a contiguous rank-1 buffer,
/// or null when the call failed before or there is nothing to do.
template <typename Memref>
CudaContext *prepare(const Memref *m, const char *what, CUdeviceptr &out) {
  CudaContext *ctx = cuda::currentCall();
  if (!ctx || currentCallFailed())
    return nullptr;
  if (m->sizes[0] > 1 && m->strides[0] != 1) {
    failCurrentCall(GROVE_ERROR_INTERNAL,
                    std::string(what) + ": the buffer is not contiguous");
    return nullptr;
  }
  out = reinterpret_cast<CUdeviceptr>(m->aligned + m->offset);
  return ctx;
}

template <typename Memref>
void deviceAllReduce(Memref *buffer, WireType type, int32_t reduction) {
  const char *what = "grove.all_reduce";
  CUdeviceptr data;
  CudaContext *ctx = prepare(buffer, what, data);
  Communicator *host = currentCommunicator();
  if (!ctx || !host) // a world of one: the sum or mean is the input
    return;
  if (CudaCollectives *c = collectivesFor(*host, *ctx, what))
    c->allReduce(data, buffer->sizes[0], type, Reduction(reduction),
                 ctx->stream(), what);
}

template <typename Memref>
void deviceAllGather(const Memref *in, Memref *out, WireType type) {
  const char *what = "grove.all_gather";
  CUdeviceptr from, to;
  CudaContext *ctx = prepare(in, what, from);
  if (!ctx || !prepare(out, what, to))
    return;
  Communicator *host = currentCommunicator();
  int world = host ? host->size() : 1;
  if (out->sizes[0] != in->sizes[0] * world) {
    failCurrentCall(GROVE_ERROR_INTERNAL,
                    std::string(what) + ": the result buffer does not hold "
                                        "one input per rank");
    return;
  }
  size_t bytes = size_t(in->sizes[0]) * wireTypeBytes(type);
  if (!host) {
    checkCurrentCall(*ctx,
                     ctx->cudaDevice().driver().cuMemcpyAsync(to, from, bytes,
                                                              ctx->stream()),
                     std::string(what) + ": copying");
    return;
  }
  if (CudaCollectives *c = collectivesFor(*host, *ctx, what))
    c->allGather(from, to, in->sizes[0], type, ctx->stream(), what);
}

template <typename Memref>
void deviceBroadcast(Memref *buffer, WireType type, int32_t root) {
  const char *what = "grove.broadcast";
  CUdeviceptr data;
  CudaContext *ctx = prepare(buffer, what, data);
  Communicator *host = currentCommunicator();
  if (!ctx || !host)
    return;
  if (root < 0 || root >= host->size()) {
    failCurrentCall(GROVE_ERROR_INVALID_ARGUMENT,
                    std::string(what) + ": root " + std::to_string(root) +
                        " is not a rank of " + std::to_string(host->size()));
    return;
  }
  if (CudaCollectives *c = collectivesFor(*host, *ctx, what))
    c->broadcast(data, buffer->sizes[0], type, root, ctx->stream(), what);
}

/// A collective a start service queued and the wait service finishes: its
/// result is in `block` (the context's, for its stream), at `result`, once
/// `done` has fired (null: complete at the start, as a staged collective or
/// one in a world of one is). The handle the services pass is its address.
struct StartedCollective {
  CudaContext *ctx;
  CudaCollectives *owner = nullptr; // null in a world of one
  void *block = nullptr;
  CUdeviceptr result = 0;
  int64_t resultCount = 0;
  WireType type;
  uint64_t bytes = 0; // what this rank sent, for the counters
  CUevent done = nullptr;

  /// Waits for the collective, even in a failed call (its peers take part
  /// in it, and the block must outlive it); false when it failed.
  bool finish(const char *what) {
    CUevent event = std::exchange(done, nullptr);
    if (!event || owner->wait(event, ctx->stream(), what, bytes))
      return true;
    abandonBlock();
    return false;
  }
  /// A collective that failed or missed its deadline may still write the
  /// block: it is leaked rather than handed to the stream's next kernels
  /// (the host communicator does the same with its buffers).
  void abandonBlock() { block = nullptr; }
  ~StartedCollective() { ctx->release(block); }
};

/// The collectives a call started and has not waited for
/// (CurrentCall::state).
struct StartedCollectives final : CallState {
  std::vector<StartedCollective *> started;
};
const char kStartedKey = 0;

StartedCollectives *startedIn(grove::rt::CurrentCall &call) {
  return static_cast<StartedCollectives *>(call.findState(&kStartedKey));
}

/// Waits for and frees the collectives the call started and did not wait
/// for: nothing of a call stays in flight once it ends, failed or not. It
/// runs before the device context's end waits for the stream.
void finishStarted(grove::rt::CurrentCall &call, bool /*abandoned*/) {
  StartedCollectives *in = startedIn(call);
  if (!in)
    return;
  std::vector<StartedCollective *> left;
  left.swap(in->started);
  for (StartedCollective *started : left) {
    started->finish("grove.collective_wait");
    delete started;
  }
}
[[maybe_unused]] const bool kHooksAdded =
    addCallHooks({/*begin=*/nullptr, finishStarted});

/// A copy of `buffer` (which the caller may reuse once this returns)
/// all-reduced in place or gathered behind it, queued; its handle, or 0
/// when the call failed.
template <typename Memref>
int64_t startCollective(const Memref *buffer, WireType type, int32_t reduction,
                        bool gather, const char *what) {
  CUdeviceptr in;
  CudaContext *ctx = prepare(buffer, what, in);
  if (!ctx)
    return 0;
  // Room for the handle before anything is queued: a queued collective
  // must always be waited for. prepare() found the call.
  std::vector<StartedCollective *> &startedHere =
      grove::rt::currentCall()->state<StartedCollectives>(&kStartedKey).started;
  startedHere.reserve(startedHere.size() + 1);
  Communicator *host = currentCommunicator();
  int64_t count = buffer->sizes[0];
  size_t bytes = size_t(count) * wireTypeBytes(type);
  auto started = std::make_unique<StartedCollective>();
  started->ctx = ctx;
  started->type = type;
  started->bytes = bytes;
  started->resultCount = gather ? count * (host ? host->size() : 1) : count;
  size_t total =
      bytes + (gather ? size_t(started->resultCount) * wireTypeBytes(type) : 0);
  started->block = total ? ctx->allocate(total) : nullptr;
  if (total && !started->block) {
    failCurrentCall(GROVE_ERROR_OUT_OF_MEMORY,
                    std::string(what) +
                        ": out of device memory for a copy "
                        "of " +
                        std::to_string(total) + " bytes");
    return 0;
  }
  auto copy = reinterpret_cast<CUdeviceptr>(started->block);
  started->result = gather ? copy + bytes : copy;
  const Driver &d = ctx->cudaDevice().driver();
  if (bytes &&
      !checkCurrentCall(*ctx, d.cuMemcpyAsync(copy, in, bytes, ctx->stream()),
                        std::string(what) + ": copying the input"))
    return 0;
  if (!host) { // a world of one: the mean, or the gather, of one input
    if (gather && bytes &&
        !checkCurrentCall(
            *ctx, d.cuMemcpyAsync(started->result, copy, bytes, ctx->stream()),
            std::string(what) + ": copying"))
      return 0;
  } else {
    started->owner = collectivesFor(*host, *ctx, what);
    if (!started->owner)
      return 0;
    bool queued =
        gather
            ? started->owner->startAllGather(copy, started->result, count, type,
                                             ctx->stream(), what, started->done)
            : started->owner->startAllReduce(
                  copy, count, type, Reduction(reduction), ctx->stream(), what,
                  started->done);
    if (!queued) {
      started->abandonBlock(); // it may have been queued before it failed
      return 0;
    }
  }
  startedHere.push_back(started.get());
  return reinterpret_cast<int64_t>(started.release());
}

/// startCollective(), with C++'s allocation failures (the bookkeeping's) as
/// the call's out-of-memory error: none may cross into generated code.
template <typename Memref>
int64_t deviceStart(const Memref *buffer, WireType type, int32_t reduction,
                    bool gather) {
  const char *what =
      gather ? "grove.all_gather_start" : "grove.all_reduce_start";
  try {
    return startCollective(buffer, type, reduction, gather, what);
  } catch (const std::bad_alloc &) {
    failCurrentCall(GROVE_ERROR_OUT_OF_MEMORY,
                    std::string(what) + ": out of host memory");
    return 0;
  }
}

/// Waits for the collective behind `handle` and writes its result to
/// `out` (nothing when the call has failed).
template <typename Memref>
void deviceWait(int64_t handle, Memref *out, WireType type) {
  const char *what = "grove.collective_wait";
  if (!handle)
    return; // the start failed, and said why
  auto *raw = reinterpret_cast<StartedCollective *>(handle);
  if (grove::rt::CurrentCall *call = grove::rt::currentCall())
    if (StartedCollectives *in = startedIn(*call))
      in->started.erase(
          std::remove(in->started.begin(), in->started.end(), raw),
          in->started.end());
  std::unique_ptr<StartedCollective> started(raw);
  CUdeviceptr to;
  if (!started->finish(what) || !prepare(out, what, to))
    return;
  if (started->type != type || started->resultCount != out->sizes[0]) {
    failCurrentCall(GROVE_ERROR_INTERNAL,
                    std::string(what) + ": the result buffer does not match "
                                        "the started collective");
    return;
  }
  CudaContext &ctx = *started->ctx;
  size_t bytes = size_t(started->resultCount) * wireTypeBytes(type);
  if (bytes)
    checkCurrentCall(ctx,
                     ctx.cudaDevice().driver().cuMemcpyAsync(
                         to, started->result, bytes, ctx.stream()),
                     std::string(what) + ": copying the result");
  // The block goes back to the stream's cache behind the copy.
}

} // namespace

#define GROVE_CUDA_COLLECTIVE_SERVICES(SUFFIX, MEMREF, TYPE)                   \
  extern "C" GROVE_API void _mlir_ciface_grove_rt_cuda_all_reduce_##SUFFIX(    \
      MEMREF *buffer, int32_t reduction) {                                     \
    deviceAllReduce(buffer, TYPE, reduction);                                  \
  }                                                                            \
  extern "C" GROVE_API void _mlir_ciface_grove_rt_cuda_all_gather_##SUFFIX(    \
      const MEMREF *in, MEMREF *out) {                                         \
    deviceAllGather(in, out, TYPE);                                            \
  }                                                                            \
  extern "C" GROVE_API void _mlir_ciface_grove_rt_cuda_broadcast_##SUFFIX(     \
      MEMREF *buffer, int32_t root) {                                          \
    deviceBroadcast(buffer, TYPE, root);                                       \
  }                                                                            \
  extern "C" GROVE_API int64_t                                                 \
      _mlir_ciface_grove_rt_cuda_all_reduce_start_##SUFFIX(                    \
          const MEMREF *buffer, int32_t reduction) {                           \
    return deviceStart(buffer, TYPE, reduction, /*gather=*/false);             \
  }                                                                            \
  extern "C" GROVE_API int64_t                                                 \
      _mlir_ciface_grove_rt_cuda_all_gather_start_##SUFFIX(                    \
          const MEMREF *buffer) {                                              \
    return deviceStart(buffer, TYPE, 0, /*gather=*/true);                      \
  }                                                                            \
  extern "C" GROVE_API void                                                    \
      _mlir_ciface_grove_rt_cuda_collective_wait_##SUFFIX(int64_t handle,      \
                                                          MEMREF *buffer) {    \
    deviceWait(handle, buffer, TYPE);                                          \
  }
GROVE_CUDA_COLLECTIVE_SERVICES(f32, grove_memref_f32_1, WireType::F32)
GROVE_CUDA_COLLECTIVE_SERVICES(f64, grove_memref_f64_1, WireType::F64)
GROVE_CUDA_COLLECTIVE_SERVICES(f16, grove_memref_u16_1, WireType::F16)
GROVE_CUDA_COLLECTIVE_SERVICES(bf16, grove_memref_u16_1, WireType::BF16)
GROVE_CUDA_COLLECTIVE_SERVICES(i32, grove_memref_i32_1, WireType::I32)
#undef GROVE_CUDA_COLLECTIVE_SERVICES
