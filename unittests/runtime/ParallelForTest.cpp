//===- ParallelForTest.cpp - grove_rt_parallel_for, the loop service ------===//
//
// The contract of abi.h: fn(ctx, begin, end) is called on disjoint,
// non-empty sub-ranges that cover [lo, hi) exactly, from the runtime's
// OpenMP team, or once inline on the calling thread when the work is small
// (fewer than 2^15 iterations counting work_per_iteration each; 0 means
// unknown), when already inside a parallel region, or in a build without
// OpenMP. Nothing here assumes more than one thread: every check but one
// holds whatever the team size, and that one (a big range does use several
// threads) runs only where OpenMP offers more than one.
//
//===----------------------------------------------------------------------===//

#include "grove/abi.h"

#include <gtest/gtest.h>

#if GROVE_HAVE_DNNL
#include <omp.h>
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

/// Records every call fn(ctx, begin, end) of one grove_rt_parallel_for over
/// [lo, hi): how often each index was covered, the sub-ranges, the threads.
struct Recorder {
  Recorder(int64_t lo, int64_t hi)
      : lo(lo), hi(hi), size(hi > lo ? hi - lo : 0),
        hits(new std::atomic<int>[size > 0 ? size : 1]) {
    for (int64_t i = 0; i < size; ++i)
      hits[i].store(0, std::memory_order_relaxed);
  }

  static void fn(void *ctx, int64_t begin, int64_t end) {
    static_cast<Recorder *>(ctx)->record(begin, end);
  }

  void record(int64_t begin, int64_t end) {
    if (begin >= end || begin < lo || end > hi) {
      badCalls.fetch_add(1);
      return;
    }
    for (int64_t i = begin; i < end; ++i)
      hits[i - lo].fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex);
    calls.emplace_back(begin, end);
    threads.insert(std::this_thread::get_id());
  }

  /// Every index of [lo, hi) covered exactly once, by well-formed calls.
  void expectCoveredOnce() const {
    EXPECT_EQ(badCalls.load(), 0)
        << "a call had an empty range or one outside [" << lo << ", " << hi
        << ")";
    int64_t wrong = 0, first = -1;
    for (int64_t i = 0; i < size; ++i) {
      if (hits[i].load(std::memory_order_relaxed) != 1) {
        if (first < 0)
          first = i;
        ++wrong;
      }
    }
    EXPECT_EQ(wrong, 0) << "index " << lo + first << " was covered "
                        << (first >= 0 ? hits[first].load() : 0) << " times ("
                        << wrong << " indices wrong)";
  }

  const int64_t lo, hi, size;
  std::unique_ptr<std::atomic<int>[]> hits;
  std::atomic<int> badCalls{0};
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> calls;
  std::set<std::thread::id> threads;
};

/// Aborts the test binary if it is still alive after `seconds`: a
/// deadlocked thread team would otherwise hang it forever.
class Watchdog {
public:
  explicit Watchdog(int seconds)
      : thread([this, seconds] {
          std::unique_lock<std::mutex> lock(mutex);
          if (!done.wait_for(lock, std::chrono::seconds(seconds),
                             [this] { return finished; })) {
            std::fprintf(stderr,
                         "ParallelForTest: no progress in %d s "
                         "(deadlock?)\n",
                         seconds);
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      finished = true;
    }
    done.notify_all();
    thread.join();
  }

private:
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  std::thread thread; // last: starts once the members above exist
};

/// Whether a big range may be expected to use more than one thread.
bool teamHasSeveralThreads() {
#if GROVE_HAVE_DNNL
  return omp_get_max_threads() > 1 && !omp_get_dynamic() && !omp_in_parallel();
#else
  return false;
#endif
}

constexpr int64_t kBig = int64_t(1) << 20;

std::atomic<int> unexpectedCalls{0};
void countCall(void *, int64_t, int64_t) { unexpectedCalls.fetch_add(1); }

} // namespace

TEST(ParallelFor, BigRangeCoveredExactlyOnce) {
  for (int64_t work : {int64_t(1), int64_t(3), int64_t(1000)}) {
    SCOPED_TRACE("work_per_iteration = " + std::to_string(work));
    Recorder r(0, kBig);
    grove_rt_parallel_for(&Recorder::fn, &r, 0, kBig, work, nullptr);
    r.expectCoveredOnce();
    EXPECT_GE(r.calls.size(), 1u);
  }
}

TEST(ParallelFor, NonZeroLowerBound) {
  const std::pair<int64_t, int64_t> ranges[] = {
      {1000003, 1000003 + 200000}, // positive, not aligned to anything
      {-50000, 70000},             // across zero
      {-300000, -100000},          // all negative
      {7, 8},                      // one iteration
  };
  for (auto [lo, hi] : ranges) {
    SCOPED_TRACE("[" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
    Recorder r(lo, hi);
    grove_rt_parallel_for(&Recorder::fn, &r, lo, hi, 0, nullptr);
    r.expectCoveredOnce();
  }
}

TEST(ParallelFor, UnknownWorkParallelizesBigRanges) {
  Recorder r(0, kBig);
  grove_rt_parallel_for(&Recorder::fn, &r, 0, kBig, /*work=*/0, nullptr);
  r.expectCoveredOnce();
  if (!teamHasSeveralThreads())
    GTEST_SKIP() << "one OpenMP thread (or no OpenMP): coverage checked, "
                    "parallelism not checkable";
  EXPECT_GT(r.threads.size(), 1u);
  EXPECT_GT(r.calls.size(), 1u);
}

TEST(ParallelFor, KnownBigWorkParallelizes) {
  // 4096 iterations of 64 each: 2^18 >= 2^15.
  Recorder r(0, 4096);
  grove_rt_parallel_for(&Recorder::fn, &r, 0, 4096, 64, nullptr);
  r.expectCoveredOnce();
  if (!teamHasSeveralThreads())
    GTEST_SKIP() << "one OpenMP thread (or no OpenMP)";
  EXPECT_GT(r.threads.size(), 1u);
}

TEST(ParallelFor, SmallWorkRunsInlineOnTheCallingThread) {
  // n * work_per_iteration < 2^15: one call over the whole range, here.
  const struct {
    int64_t lo, hi, work;
  } cases[] = {
      {0, 100, 10},      // 1000
      {5, 32772, 1},     // 32767, just below the threshold
      {-3, 4, 4681},     // 7 * 4681 = 32767
      {1000, 1001, 0},   // one iteration cannot be split, work unknown
      {40, 41, 1 << 30}, // nor when it is huge
  };
  for (const auto &c : cases) {
    SCOPED_TRACE("[" + std::to_string(c.lo) + ", " + std::to_string(c.hi) +
                 ") x " + std::to_string(c.work));
    Recorder r(c.lo, c.hi);
    grove_rt_parallel_for(&Recorder::fn, &r, c.lo, c.hi, c.work, nullptr);
    r.expectCoveredOnce();
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0].first, c.lo);
    EXPECT_EQ(r.calls[0].second, c.hi);
    ASSERT_EQ(r.threads.size(), 1u);
    EXPECT_EQ(*r.threads.begin(), std::this_thread::get_id());
  }
}

TEST(ParallelFor, HugeWorkDoesNotOverflowIntoInline) {
  // n * work overflows int64: the work is big, not small; whatever the
  // runtime decides, the range is covered once.
  Recorder r(0, 100000);
  grove_rt_parallel_for(&Recorder::fn, &r, 0, 100000,
                        std::numeric_limits<int64_t>::max(), nullptr);
  r.expectCoveredOnce();
}

TEST(ParallelFor, EmptyAndNegativeRangesCallNothing) {
  unexpectedCalls = 0;
  const std::pair<int64_t, int64_t> ranges[] = {
      {0, 0}, {5, 5}, {-7, -7}, {5, 4}, {0, -1}, {100, -100}, {kBig, 0}};
  for (auto [lo, hi] : ranges)
    for (int64_t work : {int64_t(0), int64_t(1), int64_t(1) << 20})
      grove_rt_parallel_for(&countCall, nullptr, lo, hi, work, nullptr);
  EXPECT_EQ(unexpectedCalls.load(), 0);
}

TEST(ParallelFor, NullContextIsPassedThrough) {
  // The dispatch pass passes a null context when the body captures nothing.
  static std::atomic<int64_t> covered;
  static std::atomic<int> nonNull;
  covered = 0;
  nonNull = 0;
  grove_rt_parallel_for(
      [](void *ctx, int64_t begin, int64_t end) {
        if (ctx)
          nonNull.fetch_add(1);
        covered.fetch_add(end - begin);
      },
      nullptr, 0, kBig, 0, nullptr);
  EXPECT_EQ(nonNull.load(), 0);
  EXPECT_EQ(covered.load(), kBig);
}

namespace {
/// Outer range: each outer index i covers inner[i * kInner, (i + 1) *
/// kInner) through a nested grove_rt_parallel_for.
constexpr int64_t kOuter = 64, kInner = 8192;
struct Nested {
  Recorder outer{0, kOuter};
  Recorder inner{0, kOuter *kInner};
  std::atomic<int> innerOffThread{0};
  std::atomic<int> innerInParallel{0};
};

void outerFn(void *ctx, int64_t begin, int64_t end) {
  auto *n = static_cast<Nested *>(ctx);
  n->outer.record(begin, end);
  for (int64_t i = begin; i < end; ++i) {
    struct Inner {
      Nested *n;
      std::thread::id caller;
      bool inParallel;
    } inner{n, std::this_thread::get_id(), false};
#if GROVE_HAVE_DNNL
    inner.inParallel = omp_in_parallel();
#endif
    grove_rt_parallel_for(
        [](void *ctx, int64_t b, int64_t e) {
          auto *in = static_cast<Inner *>(ctx);
          in->n->inner.record(b, e);
          // Inside an active parallel region the nested call must run
          // inline, on the thread that made it.
          if (in->inParallel) {
            in->n->innerInParallel.fetch_add(1);
            if (std::this_thread::get_id() != in->caller)
              in->n->innerOffThread.fetch_add(1);
          }
        },
        &inner, i * kInner, (i + 1) * kInner, /*work=*/0, nullptr);
  }
}
} // namespace

TEST(ParallelFor, NestedCallsCompleteAndCoverTheirRanges) {
  Watchdog watchdog(120);
  Nested n;
  grove_rt_parallel_for(&outerFn, &n, 0, kOuter, /*work=*/0, nullptr);
  n.outer.expectCoveredOnce();
  n.inner.expectCoveredOnce();
  EXPECT_EQ(n.innerOffThread.load(), 0);
}

#if GROVE_HAVE_DNNL
TEST(ParallelFor, InsideAParallelRegionRunsInline) {
  // Called from every thread of an enclosing region: each call covers its
  // own range; in an active region, in one call on the calling thread.
  Watchdog watchdog(120);
  constexpr int kCallers = 4;
  constexpr int64_t kEach = 100000;
  Recorder r(0, kCallers * kEach);
  std::atomic<int> notInline{0};
#pragma omp parallel num_threads(kCallers)
  {
    const bool active = omp_in_parallel();
    const int team = omp_get_num_threads();
    for (int c = omp_get_thread_num(); c < kCallers; c += team) {
      Recorder mine(c * kEach, (c + 1) * kEach);
      grove_rt_parallel_for(&Recorder::fn, &mine, mine.lo, mine.hi, 0, nullptr);
      for (const auto &call : mine.calls)
        r.record(call.first, call.second);
      if (active && (mine.calls.size() != 1 || mine.threads.size() != 1 ||
                     *mine.threads.begin() != std::this_thread::get_id()))
        notInline.fetch_add(1);
    }
  }
  r.expectCoveredOnce();
  EXPECT_EQ(notInline.load(), 0);
}
#endif
