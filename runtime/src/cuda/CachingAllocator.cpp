//===- CachingAllocator.cpp -----------------------------------------------===//

#include "CachingAllocator.h"

using namespace grove::rt::cuda;

CachingAllocator::CachingAllocator(std::function<void *(size_t)> alloc,
                                   std::function<void(void *)> free)
    : alloc_(std::move(alloc)), free_(std::move(free)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  trimLocked();
  // Blocks still live belong to tensors that outlive the allocator (only
  // at process exit): the driver reclaims them.
}

size_t CachingAllocator::roundUp(size_t bytes) {
  constexpr size_t kSmall = 512, kLarge = size_t(2) << 20,
                   kSmallLimit = size_t(1) << 20;
  size_t granule = bytes <= kSmallLimit ? kSmall : kLarge;
  if (bytes > SIZE_MAX - granule)
    return 0;
  return (bytes + granule - 1) / granule * granule;
}

void *CachingAllocator::allocate(size_t bytes, const void *stream) {
  if (bytes == 0)
    return nullptr;
  size_t size = roundUp(bytes);
  if (size == 0)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  auto &pool = cached_[stream];
  auto it = pool.lower_bound(size);
  if (it != pool.end() && it->first <= 2 * size) {
    void *block = it->second;
    size_t blockSize = it->first;
    pool.erase(it);
    live_.emplace(block, Block{blockSize, stream});
    stats_.bytesCached -= blockSize;
    stats_.bytesInUse += blockSize;
    ++stats_.cacheHits;
    return block;
  }
  void *block = alloc_(size);
  if (!block && stats_.bytesCached > 0) {
    trimLocked();
    block = alloc_(size);
  }
  if (!block)
    return nullptr;
  live_.emplace(block, Block{size, stream});
  stats_.bytesInUse += size;
  ++stats_.backendAllocations;
  return block;
}

bool CachingAllocator::release(void *block) {
  if (!block)
    return true;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(block);
  if (it == live_.end())
    return false;
  Block b = it->second;
  size_t size = b.size;
  live_.erase(it);
  cached_[b.stream].emplace(size, block);
  stats_.bytesInUse -= size;
  stats_.bytesCached += size;
  return true;
}

void CachingAllocator::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  trimLocked();
}

void CachingAllocator::trimLocked() {
  // The backend's free (cuMemFree) waits for the device, so blocks still in
  // use by queued work are not handed back early.
  for (auto &[stream, pool] : cached_)
    for (auto &[size, block] : pool)
      free_(block);
  cached_.clear();
  stats_.bytesCached = 0;
}

CachingAllocator::Stats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}
