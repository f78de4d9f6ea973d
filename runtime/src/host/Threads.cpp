//===- Threads.cpp - How many threads a host call uses --------------------===//

#include "Threads.h"

#include "Env.h"

#if GROVE_HAVE_DNNL
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <sys/resource.h>

namespace grove::rt {

void TeamPolicy::observe(double now, int team, double cpu, double wall) {
  if (team <= 1 || wall < kMinJudgedSeconds)
    return;
  if (cpu >= kContendedShare * team * wall) {
    strikes = 0; // the team ran undisturbed
    starvedSeconds = 0;
    backoff = kFirstBackoffSeconds;
    return;
  }
  // One starved call may be a cold one (oneDNN creating its primitives on
  // one thread), a few short ones the VM's noise; two in a row over
  // kMinStarvedSeconds are contention. While it lasts, every probe that is
  // starved narrows again.
  double starved = starvedSeconds.load() + wall;
  starvedSeconds = starved;
  if (++strikes < kStrikes || starved < kMinStarvedSeconds)
    return;
  double wait = backoff.load();
  narrowUntil = now + wait;
  backoff = std::min(wait * 2, kMaxBackoffSeconds);
}

namespace {

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/// CPU time of the whole process (user and system), in seconds.
double processCpuSeconds() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  auto sec = [](const timeval &t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return sec(usage.ru_utime) + sec(usage.ru_stime);
}

/// Process-wide: the cores are shared by every context and thread.
TeamPolicy &policy() {
  static TeamPolicy p;
  return p;
}

bool adaptive() {
  static const bool enabled =
      unsignedFromEnv("GROVE_HOST_ADAPTIVE_THREADS").value_or(1) != 0;
  return enabled;
}

} // namespace

/// Whether this thread's last call lasted long enough to judge: the CPU
/// clock is a system call, which a call of a few microseconds (a dense
/// layer at batch 1) should not pay for twice.
thread_local bool tlsJudge = true;

CallThreads::CallThreads() {
#if GROVE_HAVE_DNNL
  saved = omp_get_max_threads();
  size = saved;
  if (!adaptive() || saved <= 1 || omp_in_parallel())
    return;
  active = true;
  startSeconds = now();
  size = policy().team(startSeconds, saved);
  if (size != saved)
    omp_set_num_threads(size);
  if (tlsJudge)
    cpuBefore = processCpuSeconds();
#endif
}

CallThreads::~CallThreads() {
#if GROVE_HAVE_DNNL
  if (!active)
    return;
  double end = now(), wall = end - startSeconds;
  if (tlsJudge)
    policy().observe(end, size, processCpuSeconds() - cpuBefore, wall);
  tlsJudge = wall >= TeamPolicy::kMinJudgedSeconds;
  if (size != saved)
    omp_set_num_threads(saved);
#endif
}

} // namespace grove::rt
