//===- Parallel.cpp - The thread team for generated loops -----------------===//
//
// grove-dispatch-parallel-calls turns each outermost parallel loop of host
// code into grove_rt_parallel_for. The range is split statically over the
// OpenMP team oneDNN's GEMMs use: one team, so generated loops and GEMMs never
// have two pools of threads spinning against each other on the same cores
// (LLVM's own OpenMP lowering would bring libomp next to oneDNN's libgomp).
// Builds without oneDNN have no OpenMP and run every range inline.
//
//===----------------------------------------------------------------------===//

#include "grove/abi.h"
#include "grove/runtime.h"

#include "CurrentCall.h"
#include "Error.h"
#include "Memory.h"
#include "Trace.h"

#if GROVE_HAVE_DNNL
#include <omp.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {
/// Below this many innermost iterations in all, waking the team (about a
/// microsecond) costs more than the second core gains.
constexpr int64_t kMinParallelWork = 1 << 15;

#if GROVE_HAVE_DNNL
/// The first error the team threads reported. The call is current on the
/// calling thread only (thread 0, whose errors reach it directly): a team
/// thread's go to that thread's own slot (CurrentCall.h), and are moved
/// here so that the call fails with them too. A fixed buffer: nothing
/// may throw out of the region.
struct TeamFailure {
  bool failed = false;
  grove_status status = GROVE_ERROR_INTERNAL;
  char message[512] = "";
};

/// Runs `body` on team thread `t`, moving an error it reports to `failure`
/// (without allocating). An error the thread held before, reported outside
/// any call, is set aside meanwhile and put back after.
template <typename Body>
void runOnTeam(TeamFailure &failure, int64_t t, const Body &body) {
  if (t == 0) {
    body();
    return;
  }
  grove::rt::Failure &own = grove::rt::threadFailure();
  grove::rt::Failure before = std::move(own);
  own.clear();
  body();
  if (own.failed) {
#pragma omp critical(grove_parallel_for_error)
    if (!failure.failed) {
      failure.failed = true;
      failure.status = own.status;
      std::snprintf(failure.message, sizeof(failure.message), "%s",
                    own.message.c_str());
    }
  }
  own = std::move(before);
}
#endif
} // namespace

GROVE_API void grove_rt_parallel_for(grove_range_fn fn, void *ctx, int64_t lo,
                                     int64_t hi, int64_t work_per_iteration,
                                     const char *name) {
  const int64_t n = hi - lo;
  if (n <= 0)
    return;
  grove::rt::trace::Span span("loop", name ? name : "parallel loop");
  span.arg("iterations", n);
#if GROVE_HAVE_DNNL
  int64_t work = 0;
  bool small = work_per_iteration > 0 &&
               !__builtin_mul_overflow(n, work_per_iteration, &work) &&
               work < kMinParallelWork;
  int threads = static_cast<int>(
      std::min<int64_t>(n, static_cast<int64_t>(omp_get_max_threads())));
  if (!small && threads > 1 && !omp_in_parallel()) {
    // No abandoning the call from inside the team (Memory.h).
    grove::rt::enterParallelRegion();
    TeamFailure failure;
#pragma omp parallel num_threads(threads)
    {
      // Static blocks: neighbouring iterations touch neighbouring memory.
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t begin = lo + n * t / nt, end = lo + n * (t + 1) / nt;
      if (begin < end)
        runOnTeam(failure, t, [&] { fn(ctx, begin, end); });
    }
    grove::rt::leaveParallelRegion();
    if (failure.failed)
      grove::rt::reportServiceError(failure.message, failure.status);
    return;
  }
#else
  (void)work_per_iteration;
#endif
  fn(ctx, lo, hi);
}
