//===- Memory.cpp - Buffers of generated host code ------------------------===//
//
// Every call of a model allocates the same buffers again, so freed ones are
// kept and handed out again:
// - Blocks of at least 1 MiB go to one process-wide cache, best fit, to a
//   request of at least half their size (the CUDA caching allocator's
//   policy). glibc serves such blocks with fresh mappings and trims the top
//   of its heap, so without it each call paid page faults and the kernel's
//   zeroing of every page (docs/abi.md has the measurement). The cache is
//   bounded (GROVE_HOST_CACHE_MB, default 2048; 0 turns every cache off) and
//   sheds its oldest blocks beyond that, or all of them when an allocation
//   fails.
// - Smaller blocks go to a cache of the freeing thread, four size classes
//   an octave, at most 16 MiB a thread, without a lock: a training step
//   allocates dozens of small temporaries, and malloc, memalign and a shared
//   lock cost as much as the loops that use them.
// Each block carries a header in the 64 bytes before it: where it came from,
// its size, and its place in the list of the call that allocated it, so that
// an abandoned call frees its blocks without allocating to track them.
//
//===----------------------------------------------------------------------===//

#include "Memory.h"

#include "CurrentCall.h"
#include "Env.h"
#include "Error.h"

#include "grove/abi.h"
#include "grove/runtime.h"

#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>

namespace grove::rt {
namespace {

constexpr size_t kPage = 4096;
/// The header's room in front of a block, and every block's alignment.
constexpr size_t kHeaderBytes = 64;

size_t roundUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

size_t readLimit() {
  if (std::optional<unsigned long long> mb =
          unsignedFromEnv("GROVE_HOST_CACHE_MB"))
    return static_cast<size_t>(*mb) << 20;
  return size_t(2048) << 20;
}

/// The bound of every cache (GROVE_HOST_CACHE_MB), read once.
size_t cacheLimit() {
  static const size_t limit = readLimit();
  return limit;
}

struct CallFrame;

enum class Origin : uint32_t {
  Small,  // a size class of the thread caches
  Large,  // the process-wide cache of blocks of at least 1 MiB
  Direct, // alignment above kHeaderBytes: the system allocator's, uncached
};

/// What sits in the kHeaderBytes before each block.
struct Header {
  Header *prev, *next; // `frame`'s live blocks
  CallFrame *frame;    // the running call that allocated it, if any
  void *base;          // what the system allocator returned
  size_t capacity;     // usable bytes from the block's start
  uint64_t magic;
  Origin origin;
  uint32_t sizeClass; // of a small block
};
static_assert(sizeof(Header) <= kHeaderBytes, "header outgrows its room");
constexpr uint64_t kMagic = 0x67726f76655f626bull;
/// A block in a cache: freeing it again is reported, not a second entry.
constexpr uint64_t kCachedMagic = 0x67726f76655f6663ull;

Header *headerOf(void *block) {
  return reinterpret_cast<Header *>(static_cast<char *>(block) - kHeaderBytes);
}
void *blockOf(Header *h) { return reinterpret_cast<char *>(h) + kHeaderBytes; }

Header *initHeader(void *at, void *base, size_t capacity, Origin origin,
                   uint32_t sizeClass = 0) {
  auto *h = static_cast<Header *>(at);
  *h = Header{nullptr,  nullptr, nullptr, base,
              capacity, kMagic,  origin,  sizeClass};
  return h;
}

//===----------------------------------------------------------------------===//
// Small blocks: size classes of the freeing thread
//===----------------------------------------------------------------------===//

/// 64 B, then 2^k + j 2^(k-2) for j = 1..4 and k = 6..19: every request
/// below 1 MiB wastes under a quarter of its class.
constexpr unsigned kNumClasses = 1 + 4 * 14;

unsigned sizeClassOf(size_t bytes) {
  if (bytes <= kHeaderBytes)
    return 0;
  unsigned k = 63 - __builtin_clzll(bytes - 1); // 2^k < bytes <= 2^(k+1)
  size_t quarter = size_t(1) << (k - 2);
  unsigned j = unsigned((bytes - (size_t(1) << k) + quarter - 1) / quarter);
  return (k - 6) * 4 + j;
}

size_t classBytes(unsigned c) {
  if (c == 0)
    return kHeaderBytes;
  unsigned k = 6 + (c - 1) / 4, j = (c - 1) % 4 + 1;
  return (size_t(1) << k) + j * (size_t(1) << (k - 2));
}

/// Bytes a thread keeps in its small blocks at most (within cacheLimit()).
constexpr size_t kThreadCacheBytes = size_t(16) << 20;

/// Free small blocks, one LIFO list a class (linked through `next`).
class ThreadCache {
public:
  ThreadCache() : limit(std::min(kThreadCacheBytes, cacheLimit())) {}
  ~ThreadCache() {
    flush();
    gone = true;
  }
  Header *take(unsigned c) {
    Header *h = free[c];
    if (h) {
      free[c] = h->next;
      cached -= h->capacity;
      h->next = nullptr;
      h->magic = kMagic;
    }
    return h;
  }
  bool keep(Header *h) {
    if (cached + h->capacity > limit)
      return false;
    h->magic = kCachedMagic;
    h->next = free[h->sizeClass];
    free[h->sizeClass] = h;
    cached += h->capacity;
    return true;
  }
  /// Gives every cached block back (an allocation failed).
  void flush() {
    for (Header *&head : free)
      while (Header *h = head) {
        head = h->next;
        std::free(h->base);
      }
    cached = 0;
  }
  /// Set once this thread's cache is destroyed: blocks freed later (by
  /// static destructors, at thread exit) go straight back to the system.
  static thread_local bool gone;

private:
  Header *free[kNumClasses] = {};
  size_t cached = 0;
  const size_t limit;
};
thread_local bool ThreadCache::gone = false;

ThreadCache *threadCache() {
  if (ThreadCache::gone)
    return nullptr;
  static thread_local ThreadCache cache;
  return &cache;
}

Header *allocateSmall(size_t bytes) {
  unsigned c = sizeClassOf(bytes);
  ThreadCache *cache = threadCache();
  if (cache)
    if (Header *h = cache->take(c))
      return h;
  size_t capacity = classBytes(c);
  // aligned_alloc wants a multiple of the alignment.
  size_t size = roundUp(kHeaderBytes + capacity, kHeaderBytes);
  void *base = std::aligned_alloc(kHeaderBytes, size);
  if (!base && cache) {
    cache->flush(); // out of memory: give the cached blocks back first
    base = std::aligned_alloc(kHeaderBytes, size);
  }
  return base ? initHeader(base, base, capacity, Origin::Small, c) : nullptr;
}

void releaseSmall(Header *h) {
  ThreadCache *cache = threadCache();
  if (!cache || !cache->keep(h))
    std::free(h->base);
}

//===----------------------------------------------------------------------===//
// Large blocks: one cache for the process
//===----------------------------------------------------------------------===//

class BlockCache {
public:
  /// A page-aligned block of at least `bytes` plus its header.
  Header *allocate(size_t bytes) {
    size_t size = roundUp(bytes + kHeaderBytes, kPage);
    std::lock_guard<std::mutex> lock(mutex);
    // Best fit, wasting at most half of the block (as the CUDA allocator).
    auto it = bySize.lower_bound(size);
    if (it != bySize.end() && it->first <= 2 * size) {
      Header *h = it->second.block;
      age.erase(it->second.age);
      bySize.erase(it);
      cached -= h->capacity + kHeaderBytes;
      h->magic = kMagic;
      return h;
    }
    void *base = std::aligned_alloc(kPage, size);
    if (!base && !age.empty()) {
      // Out of memory: give the cached blocks back and try once more.
      for (auto &entry : bySize)
        std::free(entry.second.block->base);
      bySize.clear();
      age.clear();
      cached = 0;
      base = std::aligned_alloc(kPage, size);
    }
    return base ? initHeader(base, base, size - kHeaderBytes, Origin::Large)
                : nullptr;
  }

  void release(Header *h) {
    size_t size = h->capacity + kHeaderBytes;
    std::lock_guard<std::mutex> lock(mutex);
    if (size > limit) {
      std::free(h->base);
      return;
    }
    // Make room, oldest first.
    while (cached + size > limit && !age.empty()) {
      auto oldest = age.front();
      age.pop_front();
      cached -= oldest->first;
      std::free(oldest->second.block->base);
      bySize.erase(oldest);
    }
    h->magic = kCachedMagic;
    auto entry = bySize.emplace(size, Entry{h, {}});
    entry->second.age = age.insert(age.end(), entry);
    cached += size;
  }

private:
  struct Entry;
  using BySize = std::multimap<size_t, Entry>;
  struct Entry {
    Header *block;
    std::list<BySize::iterator>::iterator age;
  };
  std::mutex mutex;
  BySize bySize;                   // cached blocks by their whole size
  std::list<BySize::iterator> age; // cached blocks, oldest first
  size_t cached = 0;
  const size_t limit = cacheLimit();
};

BlockCache &largeCache() {
  // Never destroyed: buffers may be freed from static destructors of the
  // application after this library's own have run.
  static BlockCache *instance = new BlockCache;
  return *instance;
}

/// A block aligned to more than kHeaderBytes, header just before it.
Header *allocateDirect(size_t bytes, size_t alignment) {
  size_t size = 0;
  if (__builtin_add_overflow(bytes, alignment, &size))
    return nullptr;
  void *base = std::aligned_alloc(alignment, roundUp(size, alignment));
  if (!base)
    return nullptr;
  void *at = static_cast<char *>(base) + alignment - kHeaderBytes;
  return initHeader(at, base, bytes, Origin::Direct);
}

Header *allocateBlock(size_t bytes, size_t alignment) {
  if (bytes > SIZE_MAX / 2)
    return nullptr; // no system serves it; rounding must not overflow
  if (alignment > kHeaderBytes)
    return allocateDirect(bytes, alignment);
  if (bytes < kMinCachedBytes)
    return allocateSmall(bytes);
  return largeCache().allocate(bytes);
}

void releaseBlock(Header *h) {
  switch (h->origin) {
  case Origin::Small:
    return releaseSmall(h);
  case Origin::Large:
    return largeCache().release(h);
  case Origin::Direct:
    return std::free(h->base);
  }
}

//===----------------------------------------------------------------------===//
// Calls that can be abandoned
//===----------------------------------------------------------------------===//

/// The call runAbandonable is running on this thread, and the blocks it
/// allocated that are still live (a circular list through `live`). A call
/// that finishes hands its live blocks (its results) to nobody: a nested
/// call's results are not the outer call's to free if that one is
/// abandoned (the runtime makes no nested calls).
struct CallFrame {
  std::jmp_buf resume;
  Header live{};
  CallFrame *outer; // the call this one runs inside, on the same thread
  int parallelDepth = 0;
  explicit CallFrame(CallFrame *outer) : outer(outer) {
    live.prev = live.next = &live;
  }

  void track(Header *h) {
    h->frame = this;
    h->prev = &live;
    h->next = live.next;
    live.next->prev = h;
    live.next = h;
  }
  static void untrack(Header *h) {
    h->prev->next = h->next;
    h->next->prev = h->prev;
    h->prev = h->next = nullptr;
    h->frame = nullptr;
  }
  /// Ends the call: its live blocks are freed (abandoned) or outlive it.
  void finish(bool abandoned) {
    while (live.next != &live) {
      Header *h = live.next;
      untrack(h);
      if (abandoned)
        releaseBlock(h);
    }
  }
};
thread_local CallFrame *tlsFrame = nullptr;

bool runsOnThisThread(const CallFrame *frame) {
  for (const CallFrame *f = tlsFrame; f; f = f->outer)
    if (f == frame)
      return true;
  return false;
}

/// Returns to runAbandonable's setjmp with a service error pending.
/// Nothing with a destructor is live here or in the generated code's
/// frames it unwinds.
[[noreturn]] void abandon(CallFrame &frame) { std::longjmp(frame.resume, 1); }

void *allocateForCode(size_t bytes, size_t alignment) {
  CallFrame *frame = tlsFrame;
  if (Header *h = allocateBlock(bytes, alignment)) {
    if (frame)
      frame->track(h);
    return blockOf(h);
  }
  char message[96];
  std::snprintf(message, sizeof(message),
                "out of memory: cannot allocate a %zu-byte buffer", bytes);
  if (CurrentCall *call = currentCall())
    call->abandon(GROVE_ERROR_OUT_OF_MEMORY, message);
  else // a team thread of a parallel region (Parallel.cpp), or no call
    reportServiceError(message, GROVE_ERROR_OUT_OF_MEMORY);
  return nullptr;
}

__attribute__((noinline)) bool runUnder(CallFrame &frame, void (*fn)(void **),
                                        void **args) {
  if (setjmp(frame.resume) != 0)
    return false;
  fn(args);
  return true;
}

} // namespace

void hostFree(void *p) {
  if (!p)
    return;
  Header *h = headerOf(p);
  if (h->magic != kMagic) {
    reportServiceError(h->magic == kCachedMagic
                           ? "freeing a buffer that is already free"
                           : "freeing a buffer the runtime did not allocate");
    return; // leaked rather than handed out twice or to the wrong allocator
  }
  if (h->frame) {
    // Generated code frees a block on the thread that allocated it; one
    // tracked by another thread's running call cannot be unlinked here.
    if (!runsOnThisThread(h->frame)) {
      reportServiceError("freeing a buffer another thread's call owns");
      return;
    }
    CallFrame::untrack(h);
  }
  releaseBlock(h);
}

Scratch allocateScratch(size_t bytes) {
  Header *h = allocateBlock(bytes, kHeaderBytes);
  return Scratch(h ? static_cast<unsigned char *>(blockOf(h)) : nullptr);
}

void abandonCall() {
  if (tlsFrame && tlsFrame->parallelDepth == 0)
    abandon(*tlsFrame);
}

bool runAbandonable(void (*fn)(void **), void **args) {
  CallFrame frame(tlsFrame);
  tlsFrame = &frame;
  const bool completed = runUnder(frame, fn, args);
  tlsFrame = frame.outer;
  frame.finish(/*abandoned=*/!completed);
  return completed;
}

void enterParallelRegion() {
  if (tlsFrame)
    ++tlsFrame->parallelDepth;
}

void leaveParallelRegion() {
  if (tlsFrame)
    --tlsFrame->parallelDepth;
}

} // namespace grove::rt

using namespace grove::rt;

GROVE_API void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return allocateForCode(bytes, alignof(std::max_align_t));
}

GROVE_API void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                   size_t bytes) {
  return allocateForCode(bytes, alignment);
}

GROVE_API void _mlir_memref_to_llvm_free(void *p) { hostFree(p); }
