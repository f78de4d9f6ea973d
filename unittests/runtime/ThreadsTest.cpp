//===- ThreadsTest.cpp - The host team under contention -------------------===//
//
// TeamPolicy on synthetic clocks: an idle call of the team keeps the team,
// a contended one sends the next calls to one thread for a back-off that
// doubles while the team stays contended and resets once it is not.
//
//===----------------------------------------------------------------------===//

#include "Threads.h"

#include <gtest/gtest.h>

using grove::rt::TeamPolicy;

namespace {

TEST(TeamPolicy, IdleCallsKeepTheTeam) {
  TeamPolicy p;
  EXPECT_EQ(p.team(0.0, 2), 2);
  p.observe(1.0, 2, /*cpu=*/0.195, /*wall=*/0.1); // 1.95 cores of 2
  EXPECT_EQ(p.team(1.0, 2), 2);
  EXPECT_EQ(p.team(1.0, 1), 1);
}

TEST(TeamPolicy, OneStarvedCallIsNotContention) {
  // A cold call (oneDNN building its primitives on one thread) looks
  // starved once; the next call is warm.
  TeamPolicy p;
  p.observe(1.0, 2, 0.1, 0.1);
  EXPECT_EQ(p.team(1.01, 2), 2);
  p.observe(1.2, 2, 0.2, 0.1);
  p.observe(1.4, 2, 0.1, 0.1);
  EXPECT_EQ(p.team(1.41, 2), 2);
}

TEST(TeamPolicy, ContendedCallsNarrowWithGrowingBackoff) {
  TeamPolicy p;
  // 1.2 cores of 2, twice in a row: a busy process took the rest.
  p.observe(9.9, 2, 0.12, 0.1);
  p.observe(10.0, 2, 0.12, 0.1);
  EXPECT_EQ(p.team(10.1, 2), 1);
  EXPECT_EQ(p.team(10.0 + TeamPolicy::kFirstBackoffSeconds + 0.01, 2), 2);
  // The probe is contended again: twice as long on one thread.
  double t = 10.3;
  p.observe(t, 2, 0.12, 0.1);
  EXPECT_EQ(p.team(t + 0.3, 2), 1);
  EXPECT_EQ(p.team(t + 2 * TeamPolicy::kFirstBackoffSeconds + 0.01, 2), 2);
  // Calls on one thread teach nothing; an undisturbed probe resets.
  p.observe(t + 0.5, 1, 0.1, 0.1);
  p.observe(t + 1.0, 2, 0.2, 0.1);
  EXPECT_EQ(p.team(t + 1.01, 2), 2);
  p.observe(t + 1.9, 2, 0.12, 0.1);
  p.observe(t + 2.0, 2, 0.12, 0.1);
  EXPECT_EQ(p.team(t + 2.0 + 0.1, 2), 1);
  EXPECT_EQ(p.team(t + 2.0 + TeamPolicy::kFirstBackoffSeconds + 0.01, 2), 2);
}

TEST(TeamPolicy, ShortStarvedCallsNarrowOnlyOnceTheyAddUp) {
  // A 3 ms train step starved now and then by a shared VM's noise keeps
  // the team; starved calls in a row worth kMinStarvedSeconds narrow it.
  TeamPolicy p;
  const double wall = 0.003;
  double t = 1.0;
  for (int i = 0; i < 4; ++i, t += wall) {
    p.observe(t, 2, wall, wall); // one core of two
    EXPECT_EQ(p.team(t, 2), 2) << "call " << i;
  }
  p.observe(t, 2, 2 * wall, wall); // an undisturbed call starts over
  t += wall;
  int calls = 0;
  while (p.team(t, 2) == 2 && calls < 100) {
    p.observe(t, 2, wall, wall);
    t += wall;
    ++calls;
  }
  EXPECT_EQ(calls, static_cast<int>(TeamPolicy::kMinStarvedSeconds / wall) + 1);
}

TEST(TeamPolicy, BackoffIsBounded) {
  TeamPolicy p;
  double t = 0;
  for (int i = 0; i < 20; ++i) {
    p.observe(t, 2, 0.1, 0.1);
    t += TeamPolicy::kMaxBackoffSeconds + 0.01;
  }
  // After many contended probes the wait stays at the maximum.
  p.observe(t, 2, 0.1, 0.1);
  EXPECT_EQ(p.team(t + TeamPolicy::kMaxBackoffSeconds - 0.01, 2), 1);
  EXPECT_EQ(p.team(t + TeamPolicy::kMaxBackoffSeconds + 0.01, 2), 2);
}

TEST(TeamPolicy, ShortCallsSayNothing) {
  TeamPolicy p;
  p.observe(1.0, 2, 0.0, TeamPolicy::kMinJudgedSeconds / 2);
  EXPECT_EQ(p.team(1.0, 2), 2);
}

} // namespace
