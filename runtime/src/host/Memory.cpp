//===- Memory.cpp - A cache of large buffers for generated host code ------===//
//
// A forward pass allocates the same large activations on every call. glibc
// serves blocks above its mmap threshold (at most 32 MiB) with fresh
// mappings, so each call pays page faults and the kernel's zeroing of every
// page (about 5% of ResNeSt-50 at batch 16). Freed blocks of at least 1 MiB
// are therefore kept, by size, and handed out again for the same size; the
// cache is bounded (GROVE_HOST_CACHE_MB, default 2048; 0 turns it off) and
// sheds its oldest blocks beyond that. Smaller blocks go to malloc, which
// recycles them well.
//
//===----------------------------------------------------------------------===//

#include "Memory.h"

#include "grove/abi.h"
#include "grove/runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace grove::rt {
namespace {

/// Large blocks are page-aligned and a whole number of pages, so one cached
/// block serves any alignment up to a page.
constexpr size_t kPage = 4096;

size_t roundToPages(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

size_t readLimit() {
  if (const char *env = std::getenv("GROVE_HOST_CACHE_MB"); env && *env) {
    char *end = nullptr;
    unsigned long long mb = std::strtoull(env, &end, 10);
    if (end && *end == '\0')
      return static_cast<size_t>(mb) << 20;
  }
  return size_t(2048) << 20;
}

class BlockCache {
public:
  void *allocate(size_t bytes, size_t alignment) {
    if (bytes < kMinCachedBytes || alignment > kPage)
      return alignment <= alignof(std::max_align_t)
                 ? std::malloc(bytes)
                 : std::aligned_alloc(alignment, roundUp(bytes, alignment));
    size_t size = roundToPages(bytes);
    std::lock_guard<std::mutex> lock(mutex);
    void *p = nullptr;
    auto it = free.find(size);
    if (it != free.end() && !it->second.empty()) {
      p = it->second.back().first;
      age.erase(it->second.back().second);
      it->second.pop_back();
      cached -= size;
      ++hits;
    } else {
      p = std::aligned_alloc(kPage, size);
      ++misses;
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
      auto [oldP, oldSize] = age.front();
      age.pop_front();
      auto &list = free[oldSize];
      for (auto entry = list.begin(); entry != list.end(); ++entry)
        if (entry->first == oldP) {
          list.erase(entry);
          break;
        }
      cached -= oldSize;
      std::free(oldP);
    }
    age.emplace_back(p, size);
    free[size].emplace_back(p, std::prev(age.end()));
    cached += size;
  }

  HostCacheStats stats() {
    std::lock_guard<std::mutex> lock(mutex);
    return {cached, limit, hits, misses};
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[p, size] : age)
      std::free(p);
    age.clear();
    free.clear();
    cached = 0;
  }

private:
  static size_t roundUp(size_t bytes, size_t alignment) {
    return (bytes + alignment - 1) / alignment * alignment;
  }

  using Age = std::list<std::pair<void *, size_t>>;
  std::mutex mutex;
  std::unordered_map<void *, size_t> live; // large blocks handed out
  std::map<size_t, std::vector<std::pair<void *, Age::iterator>>> free;
  Age age; // cached blocks, oldest first
  size_t cached = 0, hits = 0, misses = 0;
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
HostCacheStats getHostCacheStats() { return cache().stats(); }
void releaseHostCache() { cache().clear(); }

} // namespace grove::rt

using namespace grove::rt;

GROVE_API void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return cache().allocate(bytes, alignof(std::max_align_t));
}

GROVE_API void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                   size_t bytes) {
  return cache().allocate(bytes, alignment);
}

GROVE_API void _mlir_memref_to_llvm_free(void *p) { hostFree(p); }
