//===- CurrentCallTest.cpp - The one current-call object ------------------===//
//
// CurrentCall (runtime/src/host/CurrentCall.h): a call keeps its first
// failure, can be abandoned from inside run(), runs the hooks services
// register at its begin and end (abandoned or not), gives services state
// for the call only, and nests. grove_rt_call_failed and the service-error
// functions of Error.h answer from it; errors on the team threads of
// grove_rt_parallel_for reach it.
//
//===----------------------------------------------------------------------===//

#include "CurrentCall.h"
#include "Context.h"
#include "Error.h"
#include "TestUtil.h"
#include "grove/abi.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace grove::rt;

namespace {

void nothing(void **) {}

const grove_packed_fn kEntries[] = {nothing, nothing};
const grove_model_def kModel = {
    GROVE_ABI_VERSION, 2, "cc",
    "{\"format\":\"grove-model\",\"version\":7,\"module\":\"cc\",\"target\":"
    "\"host\",\n"
    "\"state\":[],\n"
    "\"entries\":[{\"name\":\"a\",\"args\":[],\"inputs\":[],\"outputs\":[]},\n"
    "{\"name\":\"b\",\"args\":[],\"inputs\":[],\"outputs\":[]}]}\n",
    kEntries};

/// A context of the two-entry model above, destroyed with the fixture.
class CurrentCallTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_GROVE_OK(grove_context_create(&kModel, &ctx));
  }
  void TearDown() override { grove_context_destroy(ctx); }
  grove_context *ctx = nullptr;
};

/// What the test hooks saw; they record only while `recording` is set, so
/// the calls of other tests pass through them untouched.
struct HookLog {
  bool recording = false;
  std::vector<std::string> events;
};
HookLog &hookLog() {
  static HookLog log;
  return log;
}

/// Per-call state whose end is visible after the call is gone.
struct Probe final : CallState {
  ~Probe() override { hookLog().events.push_back("state gone"); }
};
const char kProbeKey = 0;

void beginHook(CurrentCall &call) {
  if (!hookLog().recording)
    return;
  EXPECT_EQ(currentCall(), &call) << "begin hooks run on the current call";
  hookLog().events.push_back("begin " + std::to_string(call.entry()));
  call.state<Probe>(&kProbeKey);
}

void endHook(CurrentCall &call, bool abandoned) {
  if (!hookLog().recording)
    return;
  EXPECT_EQ(currentCall(), &call) << "end hooks run on the current call";
  EXPECT_NE(call.findState(&kProbeKey), nullptr) << "state outlives hooks";
  hookLog().events.push_back(std::string(abandoned ? "end abandoned" : "end") +
                             (call.failed() ? " failed" : ""));
}

[[maybe_unused]] const bool kTestHooks = addCallHooks({beginHook, endHook});

/// Starts recording the hooks for one test.
struct Recording {
  Recording() {
    hookLog().events.clear();
    hookLog().recording = true;
  }
  ~Recording() { hookLog().recording = false; }
};

TEST_F(CurrentCallTest, KnowsItsContextAndEntryAndNoStreamOnTheHost) {
  EXPECT_EQ(currentCall(), nullptr);
  {
    CurrentCall call(*ctx, 1);
    EXPECT_EQ(currentCall(), &call);
    EXPECT_EQ(&call.context(), ctx);
    EXPECT_EQ(call.entry(), 1u);
    EXPECT_EQ(call.stream(), nullptr);
    EXPECT_FALSE(call.failed());
    EXPECT_EQ(call.status(), GROVE_OK);
  }
  EXPECT_EQ(currentCall(), nullptr);
}

TEST_F(CurrentCallTest, FailKeepsTheFirstStatusAndMessage) {
  CurrentCall call(*ctx, 0);
  EXPECT_EQ(grove_rt_call_failed(), 0);
  call.fail(GROVE_ERROR_INVALID_ARGUMENT, "first");
  call.fail(GROVE_ERROR_INTERNAL, std::string("second"));
  // Services that report through Error.h reach the same object.
  reportServiceError("third", GROVE_ERROR_PEER);
  grove_rt_dim_mismatch(1, 2, "fourth");
  EXPECT_TRUE(call.failed());
  EXPECT_EQ(grove_rt_call_failed(), 1);
  EXPECT_TRUE(serviceErrorPending());
  EXPECT_EQ(call.status(), GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call.message(), "first");
  std::string message;
  grove_status status = GROVE_OK;
  ASSERT_TRUE(call.takeFailure(message, status));
  EXPECT_EQ(message, "first");
  EXPECT_EQ(status, GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_FALSE(call.failed()) << "taking the failure clears it";
  EXPECT_EQ(grove_rt_call_failed(), 0);
}

TEST_F(CurrentCallTest, ThreadErrorsOutsideCallsAreNotTheCalls) {
  clearServiceError();
  reportServiceError("before any call", GROVE_ERROR_IO);
  {
    CurrentCall call(*ctx, 0);
    EXPECT_FALSE(call.failed());
    EXPECT_EQ(grove_rt_call_failed(), 0);
    call.fail(GROVE_ERROR_INTERNAL, "in the call");
  }
  // The call's failure went with it; this thread's slot holds nothing.
  EXPECT_FALSE(serviceErrorPending());
  EXPECT_EQ(grove_rt_call_failed(), 0);
  reportServiceError("after the call", GROVE_ERROR_IO);
  std::string message;
  grove_status status = GROVE_OK;
  ASSERT_TRUE(takeServiceError(message, status));
  EXPECT_EQ(message, "after the call");
  EXPECT_EQ(status, GROVE_ERROR_IO);
}

bool ranPastAbandon = false;
void abandoning(void **) {
  currentCall()->abandon(GROVE_ERROR_PEER, "a peer left");
  ranPastAbandon = true;
}

TEST_F(CurrentCallTest, AbandonLeavesTheCallAtOnce) {
  ranPastAbandon = false;
  CurrentCall call(*ctx, 0);
  EXPECT_FALSE(call.run(abandoning, nullptr));
  EXPECT_FALSE(ranPastAbandon);
  EXPECT_TRUE(call.abandoned());
  EXPECT_EQ(call.status(), GROVE_ERROR_PEER);
  EXPECT_EQ(call.message(), "a peer left");
  EXPECT_EQ(currentCall(), &call);
}

TEST_F(CurrentCallTest, AbandonOutsideRunOnlyRecords) {
  CurrentCall call(*ctx, 0);
  call.abandon(GROVE_ERROR_PEER, "no run to leave");
  EXPECT_FALSE(call.abandoned());
  EXPECT_TRUE(call.failed());
  EXPECT_EQ(call.message(), "no run to leave");
}

TEST_F(CurrentCallTest, HooksRunAtBeginAndEnd) {
  Recording recording;
  {
    CurrentCall call(*ctx, 1);
    EXPECT_EQ(hookLog().events, std::vector<std::string>({"begin 1"}));
    EXPECT_TRUE(call.run(nothing, nullptr));
    call.fail(GROVE_ERROR_INTERNAL, "recorded");
    call.end();
    EXPECT_EQ(call.findState(&kProbeKey), nullptr) << "state ends with it";
    call.end(); // once only
    EXPECT_EQ(currentCall(), &call) << "current until destroyed";
  }
  EXPECT_EQ(hookLog().events,
            std::vector<std::string>({"begin 1", "end failed", "state gone"}));
}

TEST_F(CurrentCallTest, HooksRunOnAbandonToo) {
  Recording recording;
  {
    CurrentCall call(*ctx, 0);
    EXPECT_FALSE(call.run(abandoning, nullptr));
  } // ended by its destructor
  EXPECT_EQ(hookLog().events,
            std::vector<std::string>(
                {"begin 0", "end abandoned failed", "state gone"}));
}

TEST_F(CurrentCallTest, InvokeRunsTheHooks) {
  Recording recording;
  ASSERT_GROVE_OK(grove_invoke(ctx, "b", nullptr, 0, nullptr, 0));
  EXPECT_EQ(hookLog().events,
            std::vector<std::string>({"begin 1", "end", "state gone"}));
}

TEST_F(CurrentCallTest, CallsNest) {
  CurrentCall outer(*ctx, 0);
  outer.fail(GROVE_ERROR_IO, "outer");
  {
    CurrentCall inner(*ctx, 1);
    EXPECT_EQ(currentCall(), &inner);
    EXPECT_FALSE(inner.failed()) << "a call starts without failure";
    inner.fail(GROVE_ERROR_PEER, "inner");
    EXPECT_EQ(inner.message(), "inner");
  }
  EXPECT_EQ(currentCall(), &outer);
  EXPECT_EQ(outer.status(), GROVE_ERROR_IO);
  EXPECT_EQ(outer.message(), "outer");
}

struct FailLastChunk {
  int64_t hi;
};
void failLastChunk(void *arg, int64_t, int64_t end) {
  // The last chunk runs on a team thread where there are several (the
  // calling thread takes the first), inline on the calling thread else.
  if (end == static_cast<FailLastChunk *>(arg)->hi)
    grove_rt_size_below(7, 3, "a team thread's window");
}

TEST_F(CurrentCallTest, ErrorsOnParallelForTeamThreadsReachTheCall) {
  CurrentCall call(*ctx, 0);
  FailLastChunk arg{int64_t(1) << 20};
  grove_rt_parallel_for(failLastChunk, &arg, 0, arg.hi, 0, nullptr);
  EXPECT_TRUE(call.failed());
  EXPECT_EQ(grove_rt_call_failed(), 1);
  EXPECT_EQ(call.status(), GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call.message(), "a team thread's window of at least 7, got 3");
}

} // namespace
