//===- Threads.h - How many threads a host call uses -------------*- C++
//-*-===//
//
// Host calls run on the OpenMP team oneDNN uses. On a machine where other
// processes hold the cores, a team thread that the kernel deschedules
// stalls every barrier its peers spin at, and a call takes several times
// its fair share. CallThreads watches for that - involuntary context
// switches of the process during a call - and then runs the following
// calls on the calling thread alone for a while, probing the whole team
// again with a growing back-off. GROVE_HOST_ADAPTIVE_THREADS=0 turns it
// off (the team size is then OpenMP's, OMP_NUM_THREADS).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_THREADS_H
#define GROVE_RT_THREADS_H

namespace grove::rt {

/// Brackets one host call: sets the calling thread's team for it, and
/// afterwards records whether the call was contended.
class CallThreads {
public:
  CallThreads();
  ~CallThreads();
  CallThreads(const CallThreads &) = delete;
  CallThreads &operator=(const CallThreads &) = delete;

  /// The team size this call runs with.
  int team() const { return size; }

private:
  int size = 1;
  int saved = 1;
  long switchesBefore = 0;
  double startSeconds = 0;
  bool active = false;
};

} // namespace grove::rt

#endif // GROVE_RT_THREADS_H
