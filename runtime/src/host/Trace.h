//===- Trace.h - Chrome trace spans of calls and services -------*- C++ -*-===//
//
// grove_trace_start (or GROVE_TRACE=file.json in the environment) records a
// span for every entry call and every runtime service until
// grove_trace_stop writes them as a Chrome trace (the JSON Perfetto and
// chrome://tracing open). Off, a span costs one relaxed atomic load.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_RUNTIME_TRACE_H
#define GROVE_RUNTIME_TRACE_H

#include <atomic>
#include <cstdint>
#include <string>

namespace grove::rt::trace {

extern std::atomic<bool> active;

inline bool enabled() { return active.load(std::memory_order_relaxed); }

/// Monotonic nanoseconds.
uint64_t now();

/// Records a complete span; `args` is the body of a JSON object (already
/// escaped) or empty.
void record(const std::string &name, const char *category, uint64_t start,
            uint64_t end, const std::string &args);

/// The same on `track` instead of the calling thread's: work that ran
/// elsewhere (a GPU's stream), timed on the host clock.
void recordOn(uint32_t track, const std::string &name, const char *category,
              uint64_t start, uint64_t end, const std::string &args);

/// Names `track` in the viewer ("GPU 0 stream"); kept for the trace.
void nameTrack(uint32_t track, const std::string &name);

/// The track of device `ordinal`'s work: apart from any thread's number.
inline uint32_t deviceTrack(int ordinal) {
  return 0x10000u + static_cast<uint32_t>(ordinal);
}

/// `"key":value` appended to a JSON object body (what `args` holds).
void appendArg(std::string &args, const char *key, int64_t value);

/// A span over a scope, recorded at its end when tracing is on. Nothing
/// in it throws: services record spans outside their exception guards, and
/// a span that cannot allocate is dropped (or loses an argument).
class Span {
public:
  Span(const char *category, const char *name)
      : category(category), name(name), start(enabled() ? now() : 0) {}
  ~Span() {
    if (!start)
      return;
    try {
      record(ownedName.empty() ? std::string(name) : ownedName, category, start,
             now(), args);
    } catch (...) {
      // Out of memory for the event: the trace goes without it.
    }
  }
  Span(const Span &) = delete;
  Span &operator=(const Span &) = delete;

  bool on() const { return start != 0; }
  /// A name that outlives nothing (copied; only when on).
  void setName(const std::string &n) noexcept {
    if (!start)
      return;
    try {
      ownedName = n;
    } catch (...) {
      // The static name stands.
    }
  }
  void arg(const char *key, int64_t value) noexcept;
  void arg(const char *key, const char *value) noexcept;

private:
  const char *category;
  const char *name;
  std::string ownedName, args;
  uint64_t start;
};

} // namespace grove::rt::trace

#endif // GROVE_RUNTIME_TRACE_H
