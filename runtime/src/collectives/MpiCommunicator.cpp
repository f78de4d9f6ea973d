//===- MpiCommunicator.cpp - grove_comm on Open MPI -----------------------===//
//
// Every collective is an MPI_I* operation tested until it completes or its
// deadline passes. The wait spins briefly (small messages finish in
// microseconds), then yields, then sleeps: ranks oversubscribed on few cores
// must not starve the peer they wait for.
//
// The collectives run on one worker thread per communicator, in the order
// they are called: a started collective then moves while its caller
// computes (Open MPI's non-blocking collectives only advance inside MPI
// calls, which the worker's tests make), and the collectives called after
// it queue behind it, so every rank issues them in one order.
//
//===----------------------------------------------------------------------===//

#include "Agreement.h"
#include "Communicator.h"
#include "HalfFloat.h"

#include "Error.h"

// The C API only: Open MPI's deprecated C++ bindings need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <sched.h>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace grove::rt;

namespace {

using Clock = std::chrono::steady_clock;

/// Who each rank is, to name the dead: its pid and a hash of its host name.
struct PeerId {
  int64_t pid;
  uint64_t host;
};

/// "exited", "stopped" or "" for a process of this host, from /proc.
std::string processState(int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!stat || !std::getline(stat, line))
    return "exited";
  // pid (comm) S ...: the state follows the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size())
    return "";
  char state = line[close + 2];
  if (state == 'Z' || state == 'X')
    return "exited";
  if (state == 'T' || state == 't')
    return "stopped";
  return "";
}

template <bool BF16>
void sumHalves(void *in, void *inout, int *len, MPI_Datatype *) {
  addHalves(static_cast<const uint16_t *>(in), static_cast<uint16_t *>(inout),
            *len, BF16);
}

/// data *= factor, elementwise (a mean after a sum).
void scale(void *data, int64_t count, WireType type, double factor) {
  switch (type) {
  case WireType::F32:
    for (float *p = static_cast<float *>(data), *e = p + count; p != e; ++p)
      *p = float(*p * factor);
    break;
  case WireType::F64:
    for (double *p = static_cast<double *>(data), *e = p + count; p != e; ++p)
      *p *= factor;
    break;
  case WireType::F16:
  case WireType::BF16:
    scaleHalves(static_cast<uint16_t *>(data), count, factor,
                type == WireType::BF16);
    break;
  case WireType::I32:
    for (auto *p = static_cast<int32_t *>(data), *e = p + count; p != e; ++p)
      *p = int32_t(*p * factor);
    break;
  }
}

/// MPI_THREAD_SERIALIZED is a promise of the whole process: every MPI call
/// the runtime makes, on any communicator, holds this lock (one call at a
/// time, so that two communicators' collectives interleave).
std::mutex &mpiLock() {
  static std::mutex lock;
  return lock;
}

/// Live communicators, and whether the runtime initialised MPI: it
/// finalizes MPI when the last of them goes (under mpiLock).
int liveCommunicators = 0;
bool runtimeOwnsMpi = false;

/// One thread that runs tasks in the order they are posted; it drains the
/// queue before it stops.
class Worker {
public:
  Worker() : thread([this] { run(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> hold(lock);
      stopping = true;
    }
    wake.notify_one();
    thread.join();
  }
  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> hold(lock);
      tasks.push_back(std::move(task));
    }
    wake.notify_one();
  }
  bool isCurrent() const {
    return std::this_thread::get_id() == thread.get_id();
  }

private:
  void run() {
    std::unique_lock<std::mutex> hold(lock);
    for (;;) {
      wake.wait(hold, [&] { return stopping || !tasks.empty(); });
      if (tasks.empty())
        return;
      std::function<void()> task = std::move(tasks.front());
      tasks.pop_front();
      hold.unlock();
      task();
      hold.lock();
    }
  }

  std::mutex lock;
  std::condition_variable wake;
  std::deque<std::function<void()>> tasks;
  bool stopping = false;
  std::thread thread; // last: it starts once the rest is built
};

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(MPI_Comm comm, double seconds) : comm(comm) {
    timeout = seconds;
    ++liveCommunicators;
  }
  ~MpiCommunicator() override;

  /// Duplicates `from` (MPI_Comm_idup, with the deadline).
  bool duplicate(MPI_Comm from);
  /// Exchanges the peers' identities (with the deadline) and builds the
  /// half-float sums. False with `error` on failure.
  bool init(std::string &error);

  bool allReduce(void *data, int64_t count, WireType type, Reduction reduction,
                 const char *what) override;
  bool allGather(const void *in, void *out, int64_t count, WireType type,
                 const char *what) override;
  bool broadcast(void *data, int64_t count, WireType type, int root,
                 const char *what) override;
  bool barrier(const char *what) override;
  bool exchange(const void *in, void *out, size_t bytes,
                const char *what) override;
  void post(std::function<void()> task) override {
    if (worker)
      worker->post(std::move(task));
    else
      task();
  }
  void start(std::shared_ptr<PendingCollective> pending,
             const char *what) override;
  std::string suspects() const override;
  /// Starts the worker; collectives run there from now on.
  void startWorker() { worker = std::make_unique<Worker>(); }

private:
  /// Runs `collective` on the worker, after every collective called before
  /// it, and waits for it; its failure is reported on this thread too.
  bool onWorker(const std::function<bool()> &collective);
  bool allReduceNow(void *data, int64_t count, WireType type,
                    Reduction reduction, const char *what);
  /// Who counts a gather: the wait here (a blocking one), the caller's
  /// wait (a started one: only its payload here), or nobody (control).
  enum class Counted { Here, Started, Never };
  bool allGatherNow(const void *in, void *out, int64_t count, WireType type,
                    const char *what, Counted counted = Counted::Here);
  bool broadcastNow(void *data, int64_t count, WireType type, int root,
                    const char *what);
  bool barrierNow(const char *what);
  /// The all-reduce of a started one, in its own copy.
  bool allReduceStarted(const std::shared_ptr<PendingCollective> &pending,
                        const char *what);

  /// Whether collectives may run (not failed, not refused: a `control`
  /// exchange, the agreement itself, is never refused).
  bool usable(const char *what, bool control = false);
  /// Waits for `request` until the deadline. A missed deadline leaves the
  /// request in MPI's hands: the buffers it uses must then stay allocated
  /// (staging, below, is leaked on failure).
  bool wait(MPI_Request &request, int posted, const char *what, uint64_t bytes,
            bool counted = true);
  /// A buffer of `bytes` the communicator owns, for MPI to work in.
  char *stage(size_t bytes);
  /// Copies `data` to the staging buffer, runs the operation `post` starts
  /// there and copies the result back (`counted` payload bytes).
  bool inPlace(void *data, size_t bytes, uint64_t counted, const char *what,
               const std::function<int(char *, MPI_Request *)> &post);
  bool checkCount(int64_t count, const char *what);
  MPI_Datatype datatype(WireType type) const;
  MPI_Op sumOp(WireType type) const;

  MPI_Comm comm;
  std::vector<PeerId> peers;
  PeerId self{};
  std::vector<char> staging;
  MPI_Op halfSum = MPI_OP_NULL, bf16Sum = MPI_OP_NULL;
  std::unique_ptr<Worker> worker;
};

MpiCommunicator::~MpiCommunicator() {
  releaseDevice();
  // Collectives still queued run (or fail at once, on a failed
  // communicator) before MPI objects go.
  worker.reset();
  std::lock_guard<std::mutex> hold(mpiLock());
  --liveCommunicators;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  if (!failure().empty()) {
    // A request may still use the buffers, and the peers may be gone:
    // freeing the communicator or finalizing would wait for them.
    new std::vector<char>(std::move(staging));
    new std::vector<PeerId>(std::move(peers));
    return;
  }
  for (MPI_Op *op : {&halfSum, &bf16Sum})
    if (*op != MPI_OP_NULL)
      MPI_Op_free(op);
  MPI_Comm_free(&comm);
  if (runtimeOwnsMpi && liveCommunicators == 0) {
    MPI_Finalize();
    runtimeOwnsMpi = false;
  }
}

char *MpiCommunicator::stage(size_t bytes) {
  if (staging.size() < bytes)
    staging.resize(bytes);
  return staging.data();
}

bool MpiCommunicator::duplicate(MPI_Comm from) {
  MPI_Request request;
  int rc;
  {
    std::lock_guard<std::mutex> hold(mpiLock());
    MPI_Comm_rank(from, &rankIndex);
    MPI_Comm_size(from, &worldSize);
    rc = MPI_Comm_idup(from, &comm, &request);
  }
  return wait(request, rc, "the communicator's creation", 0,
              /*counted=*/false);
}

bool MpiCommunicator::init(std::string &error) {
  MPI_Request request;
  int rc;
  {
    std::lock_guard<std::mutex> hold(mpiLock());
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rankIndex);
    MPI_Comm_size(comm, &worldSize);
    MPI_Op_create(&sumHalves<false>, /*commute=*/1, &halfSum);
    MPI_Op_create(&sumHalves<true>, /*commute=*/1, &bf16Sum);
    self = {int64_t(getpid()), hostIdentity()};
    peers.resize(size_t(worldSize));
    rc = MPI_Iallgather(&self, sizeof(PeerId), MPI_BYTE, peers.data(),
                        sizeof(PeerId), MPI_BYTE, comm, &request);
  }
  if (!wait(request, rc, "the exchange of peer identities", 0,
            /*counted=*/false)) {
    error = failure();
    return false;
  }
  return true;
}

MPI_Datatype MpiCommunicator::datatype(WireType type) const {
  switch (type) {
  case WireType::F32:
    return MPI_FLOAT;
  case WireType::F64:
    return MPI_DOUBLE;
  case WireType::F16:
  case WireType::BF16:
    return MPI_UINT16_T;
  case WireType::I32:
    return MPI_INT32_T;
  }
  return MPI_BYTE;
}

MPI_Op MpiCommunicator::sumOp(WireType type) const {
  if (type == WireType::F16)
    return halfSum;
  if (type == WireType::BF16)
    return bf16Sum;
  return MPI_SUM;
}

std::string MpiCommunicator::suspects() const {
  uint64_t here = hostIdentity();
  std::ostringstream named, unchecked;
  for (size_t r = 0; r < peers.size(); ++r) {
    if (int(r) == rankIndex)
      continue;
    if (peers[r].host != here) {
      unchecked << (unchecked.tellp() ? ", " : "") << r;
      continue;
    }
    std::string state = processState(peers[r].pid);
    if (!state.empty())
      named << (named.tellp() ? "; " : "") << "rank " << r << " (pid "
            << peers[r].pid << ") has " << state;
  }
  std::string out = named.str();
  if (out.empty())
    out = peers.empty() ? "its peers are unknown"
                        : "no peer on this host has exited or stopped";
  if (unchecked.tellp())
    out += " (ranks on other hosts not checked: " + unchecked.str() + ")";
  return out;
}

bool MpiCommunicator::usable(const char *what, bool control) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    recordFailure("MPI was finalized");
  std::string failed = failure();
  if (failed.empty()) {
    std::string refused = control ? "" : refusal();
    if (refused.empty())
      return true;
    reportServiceError(refused.c_str(), GROVE_ERROR_PEER);
    return false;
  }
  reportServiceError(
      (std::string(what) + ": the communicator failed before: " + failed)
          .c_str(),
      GROVE_ERROR_PEER);
  return false;
}

bool MpiCommunicator::checkCount(int64_t count, const char *what) {
  if (count >= 0 && count <= INT32_MAX)
    return true;
  reportServiceError((std::string(what) + ": " + std::to_string(count) +
                      " elements is more than one MPI call takes")
                         .c_str(),
                     GROVE_ERROR_UNSUPPORTED);
  return false;
}

bool MpiCommunicator::wait(MPI_Request &request, int posted, const char *what,
                           uint64_t bytes, bool counted) {
  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(timeout));
  int rc = posted, done = 0;
  for (uint64_t spin = 0; rc == MPI_SUCCESS; ++spin) {
    {
      std::lock_guard<std::mutex> hold(mpiLock());
      rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS || done)
      break;
    if (spin < 256)
      continue;
    if ((spin & 63) == 0 && Clock::now() > deadline)
      break;
    if (spin < 4096)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  double waited = std::chrono::duration<double>(Clock::now() - start).count();
  if (rc == MPI_SUCCESS && done) {
    if (counted)
      count(bytes, waited);
    return true;
  }
  std::ostringstream message;
  message << rankLabel() << ": " << what;
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    {
      std::lock_guard<std::mutex> hold(mpiLock());
      MPI_Error_string(rc, text, &length);
    }
    message << " failed in MPI (" << text << "): ";
  } else {
    message << " did not complete within " << timeout << " s: ";
  }
  message << suspects();
  recordFailure(message.str());
  reportServiceError(failure().c_str(), GROVE_ERROR_PEER);
  return false;
}

bool MpiCommunicator::inPlace(
    void *data, size_t bytes, uint64_t counted, const char *what,
    const std::function<int(char *, MPI_Request *)> &post) {
  char *buffer = stage(bytes);
  std::memcpy(buffer, data, bytes);
  MPI_Request request;
  int rc;
  {
    std::lock_guard<std::mutex> hold(mpiLock());
    rc = post(buffer, &request);
  }
  if (!wait(request, rc, what, counted))
    return false;
  std::memcpy(data, buffer, bytes);
  return true;
}

bool MpiCommunicator::onWorker(const std::function<bool()> &collective) {
  if (!worker || worker->isCurrent())
    return collective();
  std::promise<Outcome> promise;
  std::future<Outcome> result = promise.get_future();
  worker->post([&] { promise.set_value(Outcome::of(collective())); });
  // Bounded: the worker finishes every collective by its deadline.
  return result.get().report();
}

bool MpiCommunicator::allReduce(void *data, int64_t count, WireType type,
                                Reduction reduction, const char *what) {
  return onWorker(
      [&] { return allReduceNow(data, count, type, reduction, what); });
}

bool MpiCommunicator::allGather(const void *in, void *out, int64_t count,
                                WireType type, const char *what) {
  return onWorker([&] { return allGatherNow(in, out, count, type, what); });
}

bool MpiCommunicator::broadcast(void *data, int64_t count, WireType type,
                                int root, const char *what) {
  return onWorker([&] { return broadcastNow(data, count, type, root, what); });
}

bool MpiCommunicator::barrier(const char *what) {
  return onWorker([&] { return barrierNow(what); });
}

bool MpiCommunicator::exchange(const void *in, void *out, size_t bytes,
                               const char *what) {
  // Whole 32-bit words: the agreement's messages are.
  return onWorker([&] {
    return allGatherNow(in, out, int64_t(bytes / 4), WireType::I32, what,
                        Counted::Never);
  });
}

void MpiCommunicator::start(std::shared_ptr<PendingCollective> pending,
                            const char *what) {
  if (!worker)
    return Communicator::start(std::move(pending), what);
  worker->post([this, pending, what] {
    // Its wait time is the caller's, counted when it waits.
    bool ok =
        pending->isGather()
            ? allGatherNow(pending->data(), pending->result(), pending->count(),
                           pending->type(), what, Counted::Started)
            : allReduceStarted(pending, what);
    pending->finish(Outcome::of(ok));
  });
}

bool MpiCommunicator::allReduceNow(void *data, int64_t count, WireType type,
                                   Reduction reduction, const char *what) {
  if (!usable(what) || !checkCount(count, what))
    return false;
  size_t bytes = size_t(count) * wireTypeBytes(type);
  if (!inPlace(data, bytes, bytes, what, [&](char *buffer, MPI_Request *r) {
        return MPI_Iallreduce(MPI_IN_PLACE, buffer, int(count), datatype(type),
                              sumOp(type), comm, r);
      }))
    return false;
  if (reduction == Reduction::Mean)
    scale(data, count, type, 1.0 / worldSize);
  return true;
}

bool MpiCommunicator::allReduceStarted(
    const std::shared_ptr<PendingCollective> &pending, const char *what) {
  int64_t count = pending->count();
  WireType type = pending->type();
  if (!usable(what) || !checkCount(count, what))
    return false;
  // In the pending copy itself (no staging): on a missed deadline MPI may
  // still write there, so the copy is then leaked, as staging is.
  size_t bytes = size_t(count) * wireTypeBytes(type);
  MPI_Request request;
  int rc;
  {
    std::lock_guard<std::mutex> hold(mpiLock());
    rc = MPI_Iallreduce(MPI_IN_PLACE, pending->data(), int(count),
                        datatype(type), sumOp(type), comm, &request);
  }
  if (!wait(request, rc, what, bytes, /*counted=*/false)) {
    new std::shared_ptr<PendingCollective>(pending);
    return false;
  }
  Communicator::count(bytes, 0);
  if (pending->reduction() == Reduction::Mean)
    scale(pending->data(), count, type, 1.0 / worldSize);
  return true;
}

bool MpiCommunicator::allGatherNow(const void *in, void *out, int64_t count,
                                   WireType type, const char *what,
                                   Counted counted) {
  if (!usable(what, counted == Counted::Never) || !checkCount(count, what) ||
      !checkCount(count * worldSize, what))
    return false;
  size_t bytes = size_t(count) * wireTypeBytes(type);
  char *buffer = stage(bytes * size_t(worldSize + 1));
  std::memcpy(buffer, in, bytes);
  MPI_Request request;
  int rc;
  {
    std::lock_guard<std::mutex> hold(mpiLock());
    rc = MPI_Iallgather(buffer, int(count), datatype(type), buffer + bytes,
                        int(count), datatype(type), comm, &request);
  }
  if (!wait(request, rc, what, bytes, counted == Counted::Here))
    return false;
  if (counted == Counted::Started)
    Communicator::count(bytes, 0);
  std::memcpy(out, buffer + bytes, bytes * size_t(worldSize));
  return true;
}

bool MpiCommunicator::broadcastNow(void *data, int64_t count, WireType type,
                                   int root, const char *what) {
  if (!usable(what) || !checkCount(count, what))
    return false;
  size_t bytes = size_t(count) * wireTypeBytes(type);
  return inPlace(data, bytes, rankIndex == root ? bytes : 0, what,
                 [&](char *buffer, MPI_Request *r) {
                   return MPI_Ibcast(buffer, int(count), datatype(type), root,
                                     comm, r);
                 });
}

bool MpiCommunicator::barrierNow(const char *what) {
  if (!usable(what))
    return false;
  MPI_Request request;
  int rc;
  {
    std::lock_guard<std::mutex> hold(mpiLock());
    rc = MPI_Ibarrier(comm, &request);
  }
  return wait(request, rc, what, 0);
}

/// Duplicates `from` with a deadline: a rank that never comes fails the
/// others (the duplicate is then leaked with its request).
grove_status create(MPI_Comm from, const grove_comm_options &options,
                    grove_comm **out) {
  auto impl =
      std::make_unique<MpiCommunicator>(MPI_COMM_NULL, options.timeout_seconds);
  std::string error;
  if (!impl->duplicate(from) || !impl->init(error)) {
    if (error.empty())
      error = impl->failure();
    clearServiceError();
    return fail(GROVE_ERROR_PEER, "grove_comm_create: " + error);
  }
  impl->startWorker();
  std::string disagreement;
  if (!agree(*impl, {operationItem("grove_comm_create"), runtimeItem()},
             "the communicator's creation", disagreement)) {
    if (disagreement.empty())
      disagreement = impl->failure();
    clearServiceError();
    return fail(GROVE_ERROR_PEER, "grove_comm_create: " + impl->rankLabel() +
                                      ": " + disagreement);
  }
  *out = new grove_comm{std::move(impl)};
  return GROVE_OK;
}

} // namespace

grove_status grove::rt::createMpiCommunicator(const void *mpiComm,
                                              const grove_comm_options &options,
                                              grove_comm **out) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_comm_create: MPI is already finalized");
  if (!initialized) {
    if (mpiComm)
      return fail(GROVE_ERROR_INVALID_ARGUMENT,
                  "grove_comm_create_from_mpi: MPI is not initialized");
    // Open MPI's default non-blocking all-reduce of large buffers reached a
    // third of a shaped link's rate (docs/distributed.md); Rabenseifner's
    // reduce-scatter + all-gather moves the ring's bytes in fewer rounds.
    // A value the user set wins.
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", /*overwrite=*/0);
    // Collectives may run on any thread that calls the model (one at a
    // time per communicator).
    int provided = 0;
    {
      std::lock_guard<std::mutex> hold(mpiLock());
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) !=
          MPI_SUCCESS)
        return fail(GROVE_ERROR_PEER, "grove_comm_create: MPI_Init failed");
      runtimeOwnsMpi = true;
      // Errors are statuses, never the job's end: Open MPI reports some
      // errors of a non-blocking collective's inner requests through the
      // world's handler rather than the communicator's (docs/distributed.md).
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    }
  }
  int level = 0;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_SERIALIZED)
    return fail(GROVE_ERROR_UNSUPPORTED,
                "grove_comm_create: MPI provides too low a thread level "
                "(MPI_THREAD_SERIALIZED or above is needed: models may run "
                "on any thread)");
  MPI_Comm from =
      mpiComm ? *static_cast<const MPI_Comm *>(mpiComm) : MPI_COMM_WORLD;
  return create(from, options, out);
}
