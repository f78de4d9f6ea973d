//===- TraceTest.cpp - Chrome traces of calls and services ----------------===//
//
// grove_trace_start/stop and trace::Span: spans only while a trace records,
// nested spans with their arguments and escaped names in well-formed JSON,
// one trace at a time, an unwritable path refused up front.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include "grove/runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace grove::rt;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string tempPath(const char *name) {
  return testing::TempDir() + "/" + name + std::to_string(getpid()) + ".json";
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(Trace, RecordsSpansOnlyWhileOn) {
  { trace::Span before("service", "before"); }
  std::string path = tempPath("trace");
  ASSERT_EQ(grove_trace_start(path.c_str()), GROVE_OK);
  EXPECT_TRUE(trace::enabled());
  {
    trace::Span outer("entry", "");
    outer.setName("step \"one\"");
    outer.arg("model", "m");
    trace::Span inner("service", "gemm");
    inner.arg("m", 8);
  }
  ASSERT_EQ(grove_trace_stop(), GROVE_OK);
  EXPECT_FALSE(trace::enabled());
  { trace::Span after("service", "after"); }
  std::string text = readFile(path);
  EXPECT_EQ(count(text, "\"ph\":\"X\""), 2u) << text;
  EXPECT_NE(text.find("\"name\":\"step \\\"one\\\"\""), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"args\":{\"model\":\"m\"}"), std::string::npos);
  EXPECT_NE(text.find("\"args\":{\"m\":8}"), std::string::npos);
  EXPECT_EQ(text.find("before"), std::string::npos);
  EXPECT_EQ(text.find("after"), std::string::npos);
  EXPECT_EQ(text.find("\"dropped\":0"), text.find("\"dropped\""));
  std::remove(path.c_str());
}

// Work timed elsewhere (a GPU stream) goes on its own named track, with a
// thread_name record the viewers show; names last only for their trace.
TEST(Trace, SpansOnANamedTrack) {
  std::string path = tempPath("trace3");
  uint32_t track = trace::deviceTrack(1);
  trace::nameTrack(track, "not recorded");
  ASSERT_EQ(grove_trace_start(path.c_str()), GROVE_OK);
  trace::nameTrack(track, "GPU 1 (test) stream");
  std::string args;
  trace::appendArg(args, "bytes", 64);
  trace::recordOn(track, "forward_kernel", "gpu.kernel", trace::now(),
                  trace::now() + 1000, args);
  ASSERT_EQ(grove_trace_stop(), GROVE_OK);
  std::string text = readFile(path);
  std::string tid = "\"tid\":" + std::to_string(track);
  EXPECT_EQ(count(text, tid), 2u) << text;
  EXPECT_NE(text.find("\"ph\":\"M\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"args\":{\"name\":\"GPU 1 (test) stream\"}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"cat\":\"gpu.kernel\""), std::string::npos);
  EXPECT_NE(text.find("\"args\":{\"bytes\":64}"), std::string::npos);
  EXPECT_EQ(text.find("not recorded"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Trace, OneAtATimeAndWritablePathsOnly) {
  std::string path = tempPath("trace2");
  ASSERT_EQ(grove_trace_start(path.c_str()), GROVE_OK);
  EXPECT_EQ(grove_trace_start(path.c_str()), GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(grove_last_error()).find("already"), std::string::npos);
  ASSERT_EQ(grove_trace_stop(), GROVE_OK);
  EXPECT_EQ(grove_trace_stop(), GROVE_OK); // none recording
  EXPECT_EQ(grove_trace_start("/nonexistent/dir/trace.json"), GROVE_ERROR_IO);
  EXPECT_FALSE(trace::enabled());
  EXPECT_EQ(grove_trace_start(nullptr), GROVE_ERROR_INVALID_ARGUMENT);
  std::remove(path.c_str());
}

} // namespace
