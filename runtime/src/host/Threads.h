//===- Threads.h - How many threads a host call uses -------------*- C++
//-*-===//
//
// Host calls run on the OpenMP team oneDNN uses. On a machine where other
// processes hold the cores, a team thread that the kernel deschedules
// stalls every barrier its peers spin at, and a call takes several times
// its fair share. CallThreads watches for that - calls of the team in a row
// that got clearly less CPU time than the team's cores over their wall
// time - and then runs the following calls on the calling thread alone for
// a while, probing the whole team again with a growing back-off
// (TeamPolicy).
// GROVE_HOST_ADAPTIVE_THREADS=0 turns it off (the team size is then
// OpenMP's, OMP_NUM_THREADS).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_THREADS_H
#define GROVE_RT_THREADS_H

#include <atomic>

namespace grove::rt {

/// The decision, apart from the clocks: which team the next call gets, and
/// what an observed call teaches. Thread safe; shared by the process.
class TeamPolicy {
public:
  /// A call of the team that got less than this share of the team's cores
  /// was contended: an idle team computes or spins on every core it has,
  /// one beside a busy process gets its fair share and less (docs/perf.md,
  /// "ResNeSt-50 on a shared machine"). Context switches do not tell them
  /// apart on a shared VM.
  static constexpr double kContendedShare = 0.8;
  /// Calls shorter than this say nothing (the CPU clock's granularity).
  static constexpr double kMinJudgedSeconds = 2e-3;
  /// How long contended calls stay on one thread before the team is tried
  /// again; doubled each time the team is still contended, up to the limit.
  static constexpr double kFirstBackoffSeconds = 0.2;
  static constexpr double kMaxBackoffSeconds = 3.2;
  /// Starved calls of the team in a row that mean contention: at least
  /// this many, and together at least kMinStarvedSeconds of wall time. A
  /// shared VM starves a few milliseconds here and there; a busy process
  /// on a core starves every call.
  static constexpr int kStrikes = 2;
  static constexpr double kMinStarvedSeconds = 0.05;

  /// The team for a call starting at `now` when OpenMP would use `max`.
  int team(double now, int max) const {
    return max > 1 && now < narrowUntil.load() ? 1 : max;
  }
  /// Records a call of `team` threads that took `wall` seconds and
  /// `cpu` seconds of the process's CPU time, ending at `now`.
  void observe(double now, int team, double cpu, double wall);

private:
  std::atomic<double> narrowUntil{0};
  std::atomic<double> backoff{kFirstBackoffSeconds};
  std::atomic<int> strikes{0};
  std::atomic<double> starvedSeconds{0};
};

/// Brackets one host call: sets the calling thread's team for it, and
/// afterwards records whether the call was contended.
class CallThreads {
public:
  CallThreads();
  ~CallThreads();
  CallThreads(const CallThreads &) = delete;
  CallThreads &operator=(const CallThreads &) = delete;

private:
  int size = 1;
  int saved = 1;
  double cpuBefore = 0;
  double startSeconds = 0;
  bool active = false;
};

} // namespace grove::rt

#endif // GROVE_RT_THREADS_H
