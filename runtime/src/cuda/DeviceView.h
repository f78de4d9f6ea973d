//===- DeviceView.h - Memref descriptors of device memory -------*- C++ -*-===//
//
// The CUDA services (Gemm.cpp, Conv.cpp) receive each operand as generated
// code passes a memref, a descriptor by pointer (grove/abi.h): aligned
// pointer, offset, sizes, strides (in elements). One view type serves every
// rank.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RUNTIME_CUDA_DEVICEVIEW_H
#define GROVE_RUNTIME_CUDA_DEVICEVIEW_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace grove::rt::cuda {

template <int Rank> struct DeviceView {
  const char *aligned;
  int64_t offset, size[Rank], stride[Rank];

  /// The first element's address, for elements of `elemBytes` bytes.
  char *data(size_t elemBytes) const {
    return const_cast<char *>(aligned) + offset * int64_t(elemBytes);
  }
};

/// The view of memref descriptor `m` (a grove_memref_* of rank Rank).
template <int Rank, typename Memref> DeviceView<Rank> viewOf(const Memref *m) {
  static_assert(sizeof(m->sizes) == Rank * sizeof(int64_t), "rank");
  DeviceView<Rank> v{
      reinterpret_cast<const char *>(m->aligned), m->offset, {}, {}};
  std::memcpy(v.size, m->sizes, sizeof v.size);
  std::memcpy(v.stride, m->strides, sizeof v.stride);
  return v;
}

} // namespace grove::rt::cuda

#endif // GROVE_RUNTIME_CUDA_DEVICEVIEW_H
