//===- Communicator.h - Collectives with a deadline -------------*- C++ -*-===//
//
// A grove_comm: a duplicate of an MPI communicator whose collectives all run
// as non-blocking MPI operations waited on with a deadline. Debian's Open MPI
// has no ULFM, so a dead or stalled peer is found here: when a collective
// misses its deadline the communicator fails for good, naming the ranks on
// this host whose processes have exited or stopped, and every later
// collective fails at once with the same message. The app gets a status; the
// job is not aborted (mpirun must run with --enable-recovery, which keeps the
// survivors alive when a rank dies; docs/distributed.md). A collective may
// also be started by one call and waited for later, so that it moves while
// the caller computes.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_COMMUNICATOR_H
#define GROVE_RT_COMMUNICATOR_H

#include "grove/runtime.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace grove::rt {

/// Element types the collectives move (DLPack names; f16 and bf16 are
/// summed in f32 by a user-defined MPI operation).
enum class WireType : int32_t { F32, F64, F16, BF16, I32 };
enum class Reduction : int32_t { Sum = 0, Mean = 1 };

size_t wireTypeBytes(WireType type);

/// A hash of this machine's host name: ranks with the same one share a
/// host (their processes can be checked, their GPUs compared).
uint64_t hostIdentity();

/// What one communicator has moved: the payload handed to MPI (each
/// collective's send buffer) and the calls, for the tests' byte counts.
struct CommCounters {
  uint64_t payloadBytes = 0;
  uint64_t collectives = 0;
  double waitSeconds = 0;
};

/// A backend's collectives on its device memory, made on first use from a
/// communicator and owned by it (src/cuda/DeviceCollectives.cpp): it goes
/// before the communicator's own transport does.
class DeviceCollectives {
public:
  virtual ~DeviceCollectives() = default;
  /// How device memory moves: "nccl", or "staged: <why>".
  virtual const std::string &transport() const = 0;
};

/// How a collective ended: its result and, on failure, the service error it
/// reported on the thread that ran it (errors are per thread).
struct Outcome {
  bool ok = true;
  std::string message;
  grove_status status = GROVE_ERROR_PEER;

  /// `ok`, with this thread's pending service error when it failed.
  static Outcome of(bool ok);
  /// Reports the failure as a service error on this thread; returns ok.
  bool report() const;
};

/// A collective started by one call and waited for by a later one
/// (grove.all_reduce_start or grove.all_gather_start, then
/// grove.collective_wait): a copy of this rank's data, reduced in place or
/// gathered into a result of one input per rank while the caller computes.
/// The caller may reuse its own buffer as soon as the start returns.
class PendingCollective {
public:
  /// An all-reduce of `count` elements at `from`.
  PendingCollective(const void *from, int64_t count, WireType type,
                    Reduction reduction);
  /// An all-gather of `count` elements at `from` over `world` ranks.
  PendingCollective(const void *from, int64_t count, WireType type, int world);
  bool isGather() const { return gather; }
  char *data() { return bytes.data(); }
  int64_t count() const { return elements; }
  WireType type() const { return wireType; }
  Reduction reduction() const { return kind; }
  /// Where the result is, and its elements.
  char *result() { return isGather() ? gathered.data() : bytes.data(); }
  int64_t resultCount() const { return elements * world; }

  /// Records the outcome and wakes waiters.
  void finish(Outcome outcome);
  /// Blocks until finish(); false with the failure reported as a service
  /// error on this thread.
  bool wait();

private:
  std::vector<char> bytes, gathered;
  int64_t elements;
  WireType wireType;
  Reduction kind = Reduction::Sum;
  bool gather = false;
  int world = 1;
  std::mutex lock;
  std::condition_variable ready;
  bool done = false;
  Outcome outcome;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  int rank() const { return rankIndex; }
  int size() const { return worldSize; }
  /// How messages name this rank: "rank 2 of 4".
  std::string rankLabel() const {
    return "rank " + std::to_string(rankIndex) + " of " +
           std::to_string(worldSize);
  }

  /// Each fails (false, with the failure recorded) when the communicator
  /// has failed before or the operation misses its deadline. `what` names
  /// the operation in messages.
  virtual bool allReduce(void *data, int64_t count, WireType type,
                         Reduction reduction, const char *what) = 0;
  virtual bool allGather(const void *in, void *out, int64_t count,
                         WireType type, const char *what) = 0;
  virtual bool broadcast(void *data, int64_t count, WireType type, int root,
                         const char *what) = 0;
  virtual bool barrier(const char *what) = 0;
  /// Gathers `bytes` of every rank into `out`, in rank order, as control
  /// traffic that the counters leave out (the ranks' agreement,
  /// Agreement.h).
  virtual bool exchange(const void *in, void *out, size_t bytes,
                        const char *what) = 0;
  /// Runs `pending`'s collective, finishing it. Transports that can return
  /// first and run it in the background (in order with every other
  /// collective) do; the default runs it here.
  virtual void start(std::shared_ptr<PendingCollective> pending,
                     const char *what);

  /// Runs `task` where the collectives run, after every collective called
  /// before it (here, for transports without a thread of their own).
  virtual void post(std::function<void()> task) { task(); }
  /// While set, collectives fail at once with this message instead of
  /// running (GROVE_ERROR_PEER): the ranks disagreed on the call that runs
  /// them, and every rank refuses alike. Set and cleared in collective
  /// order (post); "" clears it. Unlike a failure, it ends nothing.
  void setRefusal(std::string message);
  std::string refusal() const;

  /// The failure that ended this communicator, or empty.
  std::string failure() const;
  CommCounters counters() const;
  /// Ends the communicator: every later collective fails with `message`
  /// (the first failure recorded wins). Device collectives that miss their
  /// deadline end their host communicator this way.
  void recordFailure(std::string message);
  /// Adds a collective another transport ran for this one (the device's)
  /// to the counters.
  void count(uint64_t bytes, double waited);
  /// Adds the time a caller blocked for a started collective.
  void addWaitSeconds(double waited);
  /// The deadline of one collective, in seconds.
  double timeoutSeconds() const { return timeout; }
  /// Which peers look dead or stalled, for a missed deadline's message.
  virtual std::string suspects() const { return ""; }

  /// The device collectives made for this communicator, or null.
  DeviceCollectives *device() const { return deviceSide.get(); }
  void setDevice(std::unique_ptr<DeviceCollectives> d) {
    deviceSide = std::move(d);
  }

protected:
  /// Transports release the device side first: it may still need them.
  void releaseDevice() { deviceSide.reset(); }

  int rankIndex = 0;
  int worldSize = 1;
  double timeout = 60;

private:
  mutable std::mutex lock;
  std::string failed, refused;
  CommCounters totals;
  std::unique_ptr<DeviceCollectives> deviceSide;
};

/// The communicator the current call's context is attached to, or null (a
/// context without one is a world of one process).
Communicator *currentCommunicator();

class CurrentCall;
class PendingAgreement;

/// Before a call of entry `index` runs on `ctx`: where the context has a
/// communicator and the entry runs collectives, the ranks agree
/// (Agreement.h) on the model, the entry, its collectives, whether each
/// rank accepted its call (`local`: the call's own checks, whose failure
/// is the last error) and the shapes of its inputs. Returns `local` when
/// they agree (or there is nothing to agree on); otherwise every rank fails:
/// a rank that refused its call with its own status, the others with
/// GROVE_ERROR_PEER and a message naming what differs and where. The
/// communicator stays usable.
///
/// With `deferred`, a host context's accepted call does not wait: the
/// agreement is started (in collective order, ahead of the call's own
/// collectives) and returned there, for adoptAgreement to attach to the
/// call: the call computes while the ranks agree, its first collective
/// runs only if they did, and its state writes wait for the outcome.
grove_status agreeOnCall(grove_context &ctx, uint32_t index,
                         const DLTensor *const *inputs, grove_status local,
                         std::shared_ptr<PendingAgreement> *deferred);

/// Attaches a started agreement (agreeOnCall) to `call`: a disagreement
/// fails the call before its state writes, and when it ends.
void adoptAgreement(CurrentCall &call,
                    std::shared_ptr<PendingAgreement> agreement);

/// A communicator over a duplicate of `*mpiComm` (an MPI_Comm), or of
/// MPI_COMM_WORLD when null, initialising MPI then
/// (MpiCommunicator.cpp; NoMpi.cpp where the runtime has no MPI).
grove_status createMpiCommunicator(const void *mpiComm,
                                   const grove_comm_options &options,
                                   grove_comm **out);

} // namespace grove::rt

struct grove_comm {
  std::unique_ptr<grove::rt::Communicator> impl;
};

#endif // GROVE_RT_COMMUNICATOR_H
