//===- CachingAllocatorTest.cpp - The device allocator's policy -----------===//
//
// The allocator is generic over its backend, so its reuse, best-fit and
// out-of-memory behaviour are tested here with a fake backend (no GPU).
//
//===----------------------------------------------------------------------===//

#include "CachingAllocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

using grove::rt::cuda::CachingAllocator;

namespace {

/// A backend that hands out host memory, counts calls, and can be told to
/// fail (device full).
struct FakeBackend {
  std::set<void *> live;
  size_t allocs = 0, frees = 0;
  size_t capacity = SIZE_MAX, used = 0;
  std::map<void *, size_t> sizes;

  CachingAllocator make() {
    return CachingAllocator(
        [this](size_t bytes) -> void * {
          if (used + bytes > capacity)
            return nullptr;
          void *p = std::malloc(bytes);
          live.insert(p);
          sizes[p] = bytes;
          used += bytes;
          ++allocs;
          return p;
        },
        [this](void *p) {
          EXPECT_TRUE(live.erase(p)) << "backend freed a block twice";
          used -= sizes[p];
          ++frees;
          std::free(p);
        });
  }
  ~FakeBackend() {
    for (void *p : live)
      std::free(p);
  }
};

TEST(CachingAllocator, RoundsToGranules) {
  EXPECT_EQ(CachingAllocator::roundUp(1), 512u);
  EXPECT_EQ(CachingAllocator::roundUp(512), 512u);
  EXPECT_EQ(CachingAllocator::roundUp(513), 1024u);
  EXPECT_EQ(CachingAllocator::roundUp(1u << 20), 1u << 20);
  EXPECT_EQ(CachingAllocator::roundUp((1u << 20) + 1), 2u << 20);
  EXPECT_EQ(CachingAllocator::roundUp((5u << 20) + 7), 6u << 20);
  EXPECT_EQ(CachingAllocator::roundUp(SIZE_MAX - 3), 0u) << "overflow";
}

TEST(CachingAllocator, ZeroBytesIsNull) {
  FakeBackend backend;
  CachingAllocator a = backend.make();
  EXPECT_EQ(a.allocate(0), nullptr);
  EXPECT_EQ(backend.allocs, 0u);
  EXPECT_TRUE(a.release(nullptr));
}

TEST(CachingAllocator, ReusesAFreedBlock) {
  FakeBackend backend;
  CachingAllocator a = backend.make();
  void *p = a.allocate(1000);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(a.release(p));
  EXPECT_EQ(a.stats().bytesCached, 1024u);
  void *q = a.allocate(900); // same 1024-byte granule
  EXPECT_EQ(q, p);
  EXPECT_EQ(backend.allocs, 1u);
  EXPECT_EQ(a.stats().cacheHits, 1u);
  EXPECT_EQ(a.stats().bytesInUse, 1024u);
  EXPECT_EQ(a.stats().bytesCached, 0u);
}

TEST(CachingAllocator, BestFitWithinTwiceTheRequest) {
  FakeBackend backend;
  CachingAllocator a = backend.make();
  void *big = a.allocate(4096), *mid = a.allocate(2048);
  a.release(big);
  a.release(mid);
  // 1536 -> 1536-byte request: 2048 is the best fit (<= 2x), not 4096.
  EXPECT_EQ(a.allocate(1536), mid);
  // 1024: the cached 4096 is more than twice as large - a new block.
  void *small = a.allocate(1024);
  EXPECT_NE(small, big);
  EXPECT_EQ(backend.allocs, 3u);
}

TEST(CachingAllocator, ReusesOnlyOnTheSameStream) {
  FakeBackend backend;
  CachingAllocator a = backend.make();
  int streamA, streamB;
  void *p = a.allocate(1000, &streamA);
  a.release(p);
  // Work queued on stream B could overtake A's: a fresh block.
  void *q = a.allocate(1000, &streamB);
  EXPECT_NE(q, p);
  // Stream A gets its block back; B's freed block stays with B.
  EXPECT_EQ(a.allocate(1000, &streamA), p);
  a.release(q);
  EXPECT_EQ(a.allocate(800, &streamB), q);
  EXPECT_EQ(backend.allocs, 2u);
}

TEST(CachingAllocator, DistinctLiveBlocks) {
  FakeBackend backend;
  CachingAllocator a = backend.make();
  void *p = a.allocate(100), *q = a.allocate(100);
  EXPECT_NE(p, q);
  EXPECT_EQ(a.stats().bytesInUse, 1024u);
}

TEST(CachingAllocator, RejectsUnknownAndDoubleRelease) {
  FakeBackend backend;
  CachingAllocator a = backend.make();
  int x;
  EXPECT_FALSE(a.release(&x));
  void *p = a.allocate(64);
  EXPECT_TRUE(a.release(p));
  EXPECT_FALSE(a.release(p)) << "a double free must not corrupt the cache";
  EXPECT_EQ(a.stats().bytesCached, 512u);
}

TEST(CachingAllocator, FullDeviceEmptiesTheCacheAndRetries) {
  FakeBackend backend;
  backend.capacity = 4096;
  CachingAllocator a = backend.make();
  void *p = a.allocate(3000); // 3072 of 4096 used
  a.release(p);               // cached, still held by the backend
  void *q = a.allocate(2048); // no fit (3072 > 2 * 2048? no: fits)
  EXPECT_EQ(q, p) << "3072 <= 2 * 2048: the cached block is reused";
  a.release(q);
  // 4000 does not fit in the cache (3072 < 4096) nor next to it on the
  // device: the cache is given back, then the allocation succeeds.
  void *r = a.allocate(4000);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(backend.frees, 1u);
  EXPECT_EQ(a.stats().bytesCached, 0u);
  // Nothing left anywhere: null, not a crash.
  EXPECT_EQ(a.allocate(1), nullptr);
  a.release(r);
  a.trim();
  EXPECT_EQ(backend.used, 0u);
}

TEST(CachingAllocator, DestructorReturnsTheCache) {
  FakeBackend backend;
  {
    CachingAllocator a = backend.make();
    a.release(a.allocate(10));
    a.release(a.allocate(1 << 22));
  }
  EXPECT_EQ(backend.frees, 2u);
  EXPECT_TRUE(backend.live.empty());
}

} // namespace
