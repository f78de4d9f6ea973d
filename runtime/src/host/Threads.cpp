//===- Threads.cpp - How many threads a host call uses --------------------===//

#include "Threads.h"

#include "Env.h"

#if GROVE_HAVE_DNNL
#include <omp.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <sys/resource.h>

namespace grove::rt {
namespace {

/// A call with at least this many involuntary switches per second of its
/// time, and two at least, was contended: an idle machine preempts a call
/// rarely (kernel threads, timers), a loaded one every few milliseconds.
constexpr double kContendedSwitchRate = 200.0;
constexpr long kMinContendedSwitches = 2;
/// How long contended calls stay on one thread before the team is tried
/// again; doubled each time the team is still contended, up to the limit.
constexpr double kFirstBackoffSeconds = 0.2, kMaxBackoffSeconds = 3.2;

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

long involuntarySwitches() {
  struct rusage usage;
  return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_nivcsw : 0;
}

/// Process-wide: the cores are shared by every context and thread.
struct Governor {
  std::atomic<double> narrowUntil{0};
  std::atomic<double> backoff{kFirstBackoffSeconds};
  bool enabled =
      unsignedFromEnv("GROVE_HOST_ADAPTIVE_THREADS").value_or(1) != 0;

  void observe(int team, long switches, double seconds) {
    bool contended = switches >= kMinContendedSwitches &&
                     switches >= kContendedSwitchRate * seconds;
    if (team > 1 && contended) {
      double wait = backoff.load();
      narrowUntil = now() + wait;
      backoff = std::min(wait * 2, kMaxBackoffSeconds);
    } else if (team > 1) {
      backoff = kFirstBackoffSeconds; // the team ran undisturbed
    }
  }
};

Governor &governor() {
  static Governor g;
  return g;
}

} // namespace

CallThreads::CallThreads() {
#if GROVE_HAVE_DNNL
  Governor &g = governor();
  saved = omp_get_max_threads();
  size = saved;
  if (!g.enabled || saved <= 1 || omp_in_parallel())
    return;
  active = true;
  if (now() < g.narrowUntil.load())
    size = 1;
  omp_set_num_threads(size);
  switchesBefore = involuntarySwitches();
  startSeconds = now();
#endif
}

CallThreads::~CallThreads() {
#if GROVE_HAVE_DNNL
  if (!active)
    return;
  governor().observe(size, involuntarySwitches() - switchesBefore,
                     now() - startSeconds);
  omp_set_num_threads(saved);
#endif
}

} // namespace grove::rt
