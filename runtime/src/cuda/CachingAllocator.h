//===- CachingAllocator.h - Reuse of device blocks --------------*- C++ -*-===//
//
// cuMemAlloc/cuMemFree synchronize the device and cost tens of
// microseconds; a model call allocates every intermediate. Freed blocks are
// kept per size and handed out again (best fit, at most twice the request),
// as PyTorch's CUDA allocator does. A block remembers the stream it was
// allocated for and is only reused for that stream: work queued after the
// free on that stream runs after every earlier use, so no event is needed,
// while another stream (another context, another thread) could overtake
// work still queued. The backend is a parameter so that the policy is
// testable without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_CUDA_CACHINGALLOCATOR_H
#define GROVE_RT_CUDA_CACHINGALLOCATOR_H

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

namespace grove::rt::cuda {

class CachingAllocator {
public:
  /// `alloc` returns null on failure; `free` releases what it returned.
  CachingAllocator(std::function<void *(size_t)> alloc,
                   std::function<void(void *)> free);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator &) = delete;
  CachingAllocator &operator=(const CachingAllocator &) = delete;

  /// A block of at least `bytes` for work on `stream` (null for 0 bytes, or
  /// when neither the cache nor the backend, after giving back every cached
  /// block, has one).
  void *allocate(size_t bytes, const void *stream = nullptr);
  /// Returns a block to the cache of the stream it was allocated for; false
  /// for a pointer it did not hand out.
  bool release(void *block);
  /// Gives every cached (free) block back to the backend.
  void trim();

  struct Stats {
    size_t bytesInUse = 0, bytesCached = 0;
    size_t backendAllocations = 0, cacheHits = 0;
  };
  Stats stats() const;

  /// Block size used for a request: 512-byte granules up to 1 MiB, then
  /// 2 MiB granules (so that batch sizes that differ a little share blocks).
  static size_t roundUp(size_t bytes);

private:
  void trimLocked();

  std::function<void *(size_t)> alloc_;
  std::function<void(void *)> free_;
  mutable std::mutex mutex_;
  struct Block {
    size_t size;
    const void *stream;
  };
  // stream -> (size -> free block)
  std::map<const void *, std::multimap<size_t, void *>> cached_;
  std::unordered_map<void *, Block> live_;
  Stats stats_;
};

} // namespace grove::rt::cuda

#endif // GROVE_RT_CUDA_CACHINGALLOCATOR_H
