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

void *CachingAllocator::allocate(size_t bytes) {
  if (bytes == 0)
    return nullptr;
  size_t size = roundUp(bytes);
  if (size == 0)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cached_.lower_bound(size);
  if (it != cached_.end() && it->first <= 2 * size) {
    void *block = it->second;
    size_t blockSize = it->first;
    cached_.erase(it);
    live_.emplace(block, blockSize);
    stats_.bytesCached -= blockSize;
    stats_.bytesInUse += blockSize;
    ++stats_.cacheHits;
    return block;
  }
  void *block = alloc_(size);
  if (!block && !cached_.empty()) {
    trimLocked();
    block = alloc_(size);
  }
  if (!block)
    return nullptr;
  live_.emplace(block, size);
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
  size_t size = it->second;
  live_.erase(it);
  cached_.emplace(size, block);
  stats_.bytesInUse -= size;
  stats_.bytesCached += size;
  return true;
}

void CachingAllocator::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  trimLocked();
}

void CachingAllocator::trimLocked() {
  for (auto &[size, block] : cached_)
    free_(block);
  cached_.clear();
  stats_.bytesCached = 0;
}

CachingAllocator::Stats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}
