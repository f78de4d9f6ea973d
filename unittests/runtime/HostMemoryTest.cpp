//===- HostMemoryTest.cpp - Buffers of generated host code ----------------===//
//
// The allocation functions generated host code calls (abi.h; MLIR's generic
// memref allocation names): blocks of at least 1 MiB come back from a cache
// (best fit, at most twice the request), smaller ones from the freeing
// thread's cache of size classes; every block is usable over its whole
// size, aligned as asked, and never handed out twice while live.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "grove/abi.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {

constexpr size_t kMiB = size_t(1) << 20;

bool alignedTo(const void *p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST(HostMemory, LargeBlockIsReused) {
  void *a = _mlir_memref_to_llvm_alloc(40 * kMiB);
  ASSERT_NE(a, nullptr);
  std::memset(a, 0x5a, 40 * kMiB);
  _mlir_memref_to_llvm_free(a);
  void *b = _mlir_memref_to_llvm_alloc(40 * kMiB);
  EXPECT_EQ(a, b) << "a freed block of the same size was not reused";
  _mlir_memref_to_llvm_free(b);
  // Best fit: a request of more than half the block still takes it.
  void *c = _mlir_memref_to_llvm_alloc(36 * kMiB);
  EXPECT_EQ(a, c);
  _mlir_memref_to_llvm_free(c);
}

TEST(HostMemory, CachingStartsAtOneMiB) {
  void *a = _mlir_memref_to_llvm_alloc(kMiB);
  ASSERT_NE(a, nullptr);
  _mlir_memref_to_llvm_free(a);
  // Below 1 MiB a request is a small block's, even where a cached large
  // block would fit.
  void *small = _mlir_memref_to_llvm_alloc(kMiB - 4096);
  EXPECT_NE(small, a);
  _mlir_memref_to_llvm_free(small);
  void *b = _mlir_memref_to_llvm_alloc(kMiB);
  EXPECT_EQ(a, b);
  _mlir_memref_to_llvm_free(b);
}

TEST(HostMemory, NoBlockTooSmallOrTwiceTooLarge) {
  void *a = _mlir_memref_to_llvm_alloc(40 * kMiB);
  ASSERT_NE(a, nullptr);
  _mlir_memref_to_llvm_free(a);
  void *b = _mlir_memref_to_llvm_alloc(48 * kMiB);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  std::memset(b, 1, 48 * kMiB); // the whole block is usable
  _mlir_memref_to_llvm_free(b);
  // Now 40 and 48 MiB blocks are cached; a 96 MiB one freed too is not
  // handed to a 36 MiB request (it would waste more than half), the 40 MiB
  // one is.
  void *big = _mlir_memref_to_llvm_alloc(96 * kMiB);
  ASSERT_NE(big, nullptr);
  _mlir_memref_to_llvm_free(big);
  void *c = _mlir_memref_to_llvm_alloc(36 * kMiB);
  EXPECT_NE(c, big);
  EXPECT_EQ(c, a);
  _mlir_memref_to_llvm_free(c);
}

TEST(HostMemory, LiveBlocksAreDistinct) {
  std::vector<void *> blocks;
  for (int i = 0; i < 4; ++i) {
    blocks.push_back(_mlir_memref_to_llvm_alloc(33 * kMiB));
    ASSERT_NE(blocks.back(), nullptr);
    std::memset(blocks.back(), i, 33 * kMiB);
  }
  EXPECT_EQ(std::set<void *>(blocks.begin(), blocks.end()).size(), 4u);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(static_cast<unsigned char *>(blocks[i])[33 * kMiB - 1], i);
  for (void *p : blocks)
    _mlir_memref_to_llvm_free(p);
}

TEST(HostMemory, SmallBlocksAndNull) {
  void *p = _mlir_memref_to_llvm_alloc(100);
  ASSERT_NE(p, nullptr);
  std::memset(p, 7, 100);
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(nullptr); // a no-op, like free(NULL)
}

TEST(HostMemory, SmallBlockIsReusedByItsClass) {
  // 1000 and 900 bytes share the 1 KiB class (four classes an octave); the
  // last block freed is the first handed out again.
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, 1000);
  ASSERT_NE(a, nullptr);
  _mlir_memref_to_llvm_free(a);
  void *b = _mlir_memref_to_llvm_aligned_alloc(64, 900);
  EXPECT_EQ(a, b);
  // 1100 bytes do not fit it.
  void *c = _mlir_memref_to_llvm_aligned_alloc(64, 1100);
  EXPECT_NE(c, b);
  _mlir_memref_to_llvm_free(b);
  _mlir_memref_to_llvm_free(c);
}

TEST(HostMemory, SmallBlocksAreUsableOverTheirSize) {
  // Every size class boundary and its neighbours, live at once: each block
  // holds its own tag over all its bytes and 64-byte alignment.
  std::vector<std::pair<unsigned char *, size_t>> blocks;
  for (size_t octave = 64; octave < kMiB; octave *= 2)
    for (size_t j = 0; j < 4; ++j)
      for (size_t delta : {size_t(0), size_t(1)}) {
        size_t bytes = octave + j * octave / 4 + delta;
        auto *p = static_cast<unsigned char *>(
            _mlir_memref_to_llvm_aligned_alloc(64, bytes));
        ASSERT_NE(p, nullptr) << bytes;
        EXPECT_TRUE(alignedTo(p, 64)) << bytes;
        std::memset(p, int(blocks.size() % 251), bytes);
        blocks.push_back({p, bytes});
      }
  for (size_t i = 0; i < blocks.size(); ++i) {
    auto [p, bytes] = blocks[i];
    EXPECT_EQ(p[0], i % 251) << bytes;
    EXPECT_EQ(p[bytes - 1], i % 251) << bytes;
  }
  // The largest class, just below the large blocks.
  auto *top = static_cast<unsigned char *>(
      _mlir_memref_to_llvm_aligned_alloc(64, kMiB - 1));
  ASSERT_NE(top, nullptr);
  std::memset(top, 9, kMiB - 1);
  EXPECT_EQ(top[kMiB - 2], 9);
  _mlir_memref_to_llvm_free(top);
  for (auto [p, bytes] : blocks)
    _mlir_memref_to_llvm_free(p);
}

TEST(HostMemory, BlockFreedTwiceIsReportedNotReused) {
  // The second free is an error, not a second entry in the cache: the
  // next two blocks of the class are distinct.
  for (size_t bytes : {size_t(3000), 3 * kMiB}) {
    void *a = _mlir_memref_to_llvm_aligned_alloc(64, bytes);
    ASSERT_NE(a, nullptr);
    _mlir_memref_to_llvm_free(a);
    _mlir_memref_to_llvm_free(a);
    void *b = _mlir_memref_to_llvm_aligned_alloc(64, bytes);
    void *c = _mlir_memref_to_llvm_aligned_alloc(64, bytes);
    EXPECT_NE(b, c) << bytes;
    _mlir_memref_to_llvm_free(b);
    _mlir_memref_to_llvm_free(c);
  }
  EXPECT_TRUE(grove::test::clearParkedServiceError());
}

TEST(HostMemory, SmallBlockFreedOnAnotherThread) {
  // A result may be freed by any thread: the block joins that thread's
  // cache, and the allocating thread gets a fresh one.
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, 4000);
  ASSERT_NE(a, nullptr);
  void *reused = nullptr;
  std::thread([&] {
    _mlir_memref_to_llvm_free(a);
    reused = _mlir_memref_to_llvm_aligned_alloc(64, 4000);
    _mlir_memref_to_llvm_free(reused);
  }).join();
  EXPECT_EQ(reused, a);
  void *b = _mlir_memref_to_llvm_aligned_alloc(64, 4000);
  ASSERT_NE(b, nullptr);
  std::memset(b, 1, 4000);
  _mlir_memref_to_llvm_free(b);
}

TEST(HostMemory, AlignedAllocation) {
  for (size_t alignment : {size_t(16), size_t(64), size_t(4096)}) {
    for (size_t bytes : {size_t(1000), 5 * kMiB + 3, 33 * kMiB + 3}) {
      void *p = _mlir_memref_to_llvm_aligned_alloc(alignment, bytes);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(alignedTo(p, alignment)) << alignment << " " << bytes;
      std::memset(p, 3, bytes);
      _mlir_memref_to_llvm_free(p);
    }
  }
}

TEST(HostMemory, ImpossibleRequestFailsCleanly) {
  // With a block cached, a request no system can serve returns NULL (after
  // giving the cached blocks back and trying again), and later calls work.
  void *a = _mlir_memref_to_llvm_alloc(40 * kMiB);
  ASSERT_NE(a, nullptr);
  _mlir_memref_to_llvm_free(a);
  EXPECT_EQ(_mlir_memref_to_llvm_aligned_alloc(64, size_t(1) << 60), nullptr);
  void *b = _mlir_memref_to_llvm_alloc(40 * kMiB);
  ASSERT_NE(b, nullptr);
  std::memset(b, 2, 40 * kMiB);
  _mlir_memref_to_llvm_free(b);
}

TEST(HostMemory, ConcurrentUse) {
  // Threads allocating, writing a tag, checking it and freeing, over sizes
  // that hit and miss the cache: a block handed out twice would show as a
  // foreign tag.
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 100; ++i) {
        size_t bytes = (1 + (i + t) % 3) * 16 * kMiB;
        auto *p = static_cast<unsigned char *>(
            _mlir_memref_to_llvm_aligned_alloc(64, bytes));
        if (!p) {
          ++failures[t];
          continue;
        }
        std::memset(p, t + 1, bytes);
        if (p[0] != t + 1 || p[bytes - 1] != t + 1)
          ++failures[t];
        _mlir_memref_to_llvm_free(p);
      }
    });
  for (auto &thread : threads)
    thread.join();
  for (int t = 0; t < 4; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
}

} // namespace
