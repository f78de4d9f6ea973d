//===- Trace.cpp - Chrome trace spans of calls and services ---------------===//

#include "Trace.h"

#include "Error.h"

#include "grove/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <vector>

#include <unistd.h>

using namespace grove::rt;

namespace {

struct Event {
  std::string name;
  const char *category;
  uint64_t start, end;
  uint32_t thread;
  std::string args;
};

/// The spans of the trace in progress; a bounded buffer (a long run drops
/// the spans past it and says how many in the file).
struct Recorder {
  std::mutex lock;
  std::string path;
  std::vector<Event> events;
  std::map<uint32_t, std::string> trackNames;
  uint64_t dropped = 0;
  uint64_t origin = 0;
};

constexpr size_t kMaxEvents = 1 << 22;

Recorder &recorder() {
  static Recorder *r = new Recorder; // outlives exit-time writes
  return *r;
}

/// Small per-thread numbers, in the order threads first record.
uint32_t threadNumber() {
  static std::atomic<uint32_t> next{1};
  thread_local uint32_t id = next.fetch_add(1);
  return id;
}

void appendEscaped(std::string &out, const std::string &s) {
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
}

std::string render(const Recorder &r) {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped\":" +
                    std::to_string(r.dropped) + "},\"traceEvents\":[\n";
  int pid = getpid();
  char buf[160];
  bool first = true;
  for (const auto &[track, name] : r.trackNames) {
    std::snprintf(buf, sizeof(buf),
                  "%s{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
                  "\"tid\":%u,\"args\":{\"name\":\"",
                  first ? "" : ",\n", pid, track);
    out += buf;
    appendEscaped(out, name);
    out += "\"}}";
    first = false;
  }
  for (const Event &e : r.events) {
    out += first ? "" : ",\n";
    first = false;
    out += "{\"name\":\"";
    appendEscaped(out, e.name);
    // Microseconds with nanosecond decimals: Chrome's unit.
    std::snprintf(buf, sizeof(buf),
                  "\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
                  "\"pid\":%d,\"tid\":%u",
                  e.category, double(e.start - r.origin) / 1e3,
                  double(e.end - e.start) / 1e3, pid, e.thread);
    out += buf;
    if (!e.args.empty())
      out += ",\"args\":{" + e.args + "}";
    out += "}";
  }
  return out + "\n]}\n";
}

/// Writes `text` to a temporary file renamed over `path`.
bool writeFile(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0)
    ok = false;
  if (!ok)
    std::remove(tmp.c_str());
  return ok;
}

void stopAtExit() { grove_trace_stop(); }

/// GROVE_TRACE=file.json traces the whole process, written at exit.
__attribute__((constructor)) void startFromEnvironment() {
  const char *path = std::getenv("GROVE_TRACE");
  if (path && *path && grove_trace_start(path) == GROVE_OK)
    std::atexit(stopAtExit);
}

} // namespace

std::atomic<bool> trace::active{false};

uint64_t trace::now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_nsec);
}

void trace::record(const std::string &name, const char *category,
                   uint64_t start, uint64_t end, const std::string &args) {
  recordOn(threadNumber(), name, category, start, end, args);
}

void trace::recordOn(uint32_t track, const std::string &name,
                     const char *category, uint64_t start, uint64_t end,
                     const std::string &args) {
  Recorder &r = recorder();
  std::lock_guard<std::mutex> guard(r.lock);
  if (!enabled())
    return;
  if (r.events.size() >= kMaxEvents) {
    ++r.dropped;
    return;
  }
  r.events.push_back(Event{name, category, start, end, track, args});
}

void trace::nameTrack(uint32_t track, const std::string &name) {
  Recorder &r = recorder();
  std::lock_guard<std::mutex> guard(r.lock);
  if (enabled())
    r.trackNames[track] = name;
}

void trace::appendArg(std::string &args, const char *key, int64_t value) {
  args += (args.empty() ? "\"" : ",\"") + std::string(key) +
          "\":" + std::to_string(value);
}

void trace::Span::arg(const char *key, int64_t value) noexcept {
  if (!start)
    return;
  size_t before = args.size();
  try {
    appendArg(args, key, value);
  } catch (...) {
    args.resize(before); // out of memory: the span without this argument
  }
}

void trace::Span::arg(const char *key, const char *value) noexcept {
  if (!start)
    return;
  size_t before = args.size();
  try {
    args += (args.empty() ? "\"" : ",\"") + std::string(key) + "\":\"";
    appendEscaped(args, value);
    args += "\"";
  } catch (...) {
    args.resize(before); // out of memory: the span without this argument
  }
}

extern "C" {

GROVE_API grove_status grove_trace_start(const char *path) {
  if (!path || !*path)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_trace_start: no file name");
  Recorder &r = recorder();
  std::lock_guard<std::mutex> guard(r.lock);
  if (trace::enabled())
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_trace_start: a trace to '" + r.path +
                    "' is already being recorded");
  // Fail now, not after the run, on a file that cannot be written.
  FILE *probe = std::fopen((std::string(path) + ".tmp").c_str(), "wb");
  if (!probe)
    return fail(GROVE_ERROR_IO, "grove_trace_start: cannot write '" +
                                    std::string(path) + ".tmp'");
  std::fclose(probe);
  std::remove((std::string(path) + ".tmp").c_str());
  r.path = path;
  r.events.clear();
  r.trackNames.clear();
  r.dropped = 0;
  r.origin = trace::now();
  trace::active.store(true);
  return GROVE_OK;
}

GROVE_API grove_status grove_trace_stop(void) {
  Recorder &r = recorder();
  std::string path, text;
  {
    std::lock_guard<std::mutex> guard(r.lock);
    if (!trace::enabled())
      return GROVE_OK;
    trace::active.store(false);
    text = render(r);
    path = r.path;
    r.events.clear();
    r.events.shrink_to_fit();
  }
  if (!writeFile(path, text))
    return fail(GROVE_ERROR_IO,
                "grove_trace_stop: cannot write '" + path + "'");
  return GROVE_OK;
}

} // extern "C"
