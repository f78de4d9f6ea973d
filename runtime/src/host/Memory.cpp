//===- Memory.cpp - A cache of large buffers for generated host code ------===//
//
// A forward pass allocates the same large activations on every call. glibc
// serves blocks above its mmap threshold with fresh mappings and trims the
// top of its heap, so each call pays page faults and the kernel's zeroing of
// every page: ResNeSt-50 at batch 16 took 1.55-1.73 s per call with glibc's
// defaults and 1.08-1.11 s with this cache (about the same as glibc tuned
// with the GLIBC_TUNABLES of toolchain.md, which a library cannot ask its
// users for). Freed blocks of at least 1 MiB are therefore kept and handed
// out again, best fit, to a request of at least half their size (the policy
// of the CUDA caching allocator). After the first call every large block
// comes from the cache, which holds about what the call's peak holds anyway
// (1.8 GB for that model; peak resident set unchanged). The cache is bounded
// (GROVE_HOST_CACHE_MB, default 2048; 0 turns it off) and sheds its oldest
// blocks beyond that, or all of them when an allocation fails. Smaller
// blocks go to malloc.
//
//===----------------------------------------------------------------------===//

#include "Memory.h"

#include "Env.h"
#include "Error.h"

#include "grove/abi.h"
#include "grove/runtime.h"

#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace grove::rt {
namespace {

/// Large blocks are page-aligned and a whole number of pages, so one cached
/// block serves any alignment up to a page.
constexpr size_t kPage = 4096;

size_t readLimit() {
  if (std::optional<unsigned long long> mb =
          unsignedFromEnv("GROVE_HOST_CACHE_MB"))
    return static_cast<size_t>(*mb) << 20;
  return size_t(2048) << 20;
}

class BlockCache {
public:
  void *allocate(size_t bytes, size_t alignment) {
    if (bytes < kMinCachedBytes || alignment > kPage)
      return alignment <= alignof(std::max_align_t)
                 ? std::malloc(bytes)
                 : std::aligned_alloc(alignment, roundUp(bytes, alignment));
    size_t size = roundUp(bytes, kPage);
    std::lock_guard<std::mutex> lock(mutex);
    void *p = nullptr;
    // Best fit, wasting at most half of the block (as the CUDA allocator).
    auto it = bySize.lower_bound(size);
    if (it != bySize.end() && it->first <= 2 * size) {
      p = it->second.block;
      size = it->first;
      age.erase(it->second.age);
      bySize.erase(it);
      cached -= size;
    } else {
      p = std::aligned_alloc(kPage, size);
      if (!p && !age.empty()) {
        // Out of memory: give the cached blocks back and try once more.
        for (auto &entry : bySize)
          std::free(entry.second.block);
        bySize.clear();
        age.clear();
        cached = 0;
        p = std::aligned_alloc(kPage, size);
      }
    }
    if (p)
      live[p] = size;
    return p;
  }

  void release(void *p) {
    if (!p)
      return;
    std::unique_lock<std::mutex> lock(mutex);
    auto it = live.find(p);
    if (it == live.end()) {
      lock.unlock();
      std::free(p); // a small block
      return;
    }
    size_t size = it->second;
    live.erase(it);
    if (size > limit) {
      lock.unlock();
      std::free(p);
      return;
    }
    // Make room, oldest first.
    while (cached + size > limit && !age.empty()) {
      auto oldest = age.front();
      age.pop_front();
      cached -= oldest->first;
      std::free(oldest->second.block);
      bySize.erase(oldest);
    }
    auto entry = bySize.emplace(size, Entry{p, {}});
    entry->second.age = age.insert(age.end(), entry);
    cached += size;
  }

private:
  static size_t roundUp(size_t bytes, size_t alignment) {
    return (bytes + alignment - 1) / alignment * alignment;
  }

  struct Entry;
  using BySize = std::multimap<size_t, Entry>;
  struct Entry {
    void *block;
    std::list<BySize::iterator>::iterator age;
  };
  std::mutex mutex;
  std::unordered_map<void *, size_t> live; // large blocks handed out
  BySize bySize;                           // cached blocks
  std::list<BySize::iterator> age;         // cached blocks, oldest first
  size_t cached = 0;
  const size_t limit = readLimit();
};

BlockCache &cache() {
  // Never destroyed: buffers may be freed from static destructors of the
  // application after this library's own have run.
  static BlockCache *instance = new BlockCache;
  return *instance;
}

} // namespace

void hostFree(void *p) { cache().release(p); }

namespace {

/// The call runAbandonable is running on this thread.
struct CallFrame {
  std::jmp_buf resume;
  std::unordered_set<void *> live; // allocated by the call, not yet freed
  int parallelDepth = 0;
};
thread_local CallFrame *tlsFrame = nullptr;

/// Returns to runAbandonable's setjmp with an out-of-memory error pending.
/// Nothing with a destructor is live here or in the generated code's
/// frames it unwinds.
[[noreturn]] void abandon(CallFrame &frame) { std::longjmp(frame.resume, 1); }

void *allocateForCode(size_t bytes, size_t alignment) {
  void *p = cache().allocate(bytes, alignment);
  CallFrame *frame = tlsFrame;
  if (p && frame) {
    try {
      frame->live.insert(p);
      return p;
    } catch (...) { // no memory to track it: as if the block were missing
      hostFree(p);
      p = nullptr;
    }
  }
  if (p || bytes == 0)
    return p;
  char message[96];
  std::snprintf(message, sizeof(message),
                "out of memory: cannot allocate a %zu-byte buffer", bytes);
  reportServiceError(message, GROVE_ERROR_OUT_OF_MEMORY);
  if (frame && frame->parallelDepth == 0)
    abandon(*frame);
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

bool runAbandonable(void (*fn)(void **), void **args) {
  CallFrame frame;
  CallFrame *outer = tlsFrame;
  tlsFrame = &frame;
  const bool completed = runUnder(frame, fn, args);
  tlsFrame = outer;
  if (!completed)
    for (void *p : frame.live)
      hostFree(p);
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

GROVE_API void _mlir_memref_to_llvm_free(void *p) {
  if (tlsFrame)
    tlsFrame->live.erase(p);
  hostFree(p);
}
