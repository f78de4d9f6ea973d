//===- DeviceView.h - Exploded memref descriptors of device memory -*- C++
//-*-===//
//
// The CUDA services (Gemm.cpp, Conv.cpp) receive each operand as generated
// code passes a memref: aligned pointer, offset, sizes, strides (in
// elements). One view type serves every rank.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RUNTIME_CUDA_DEVICEVIEW_H
#define GROVE_RUNTIME_CUDA_DEVICEVIEW_H

#include <cstddef>
#include <cstdint>

namespace grove::rt::cuda {

template <int Rank> struct DeviceView {
  const char *aligned;
  int64_t offset, size[Rank], stride[Rank];

  /// The first element's address, for elements of `elemBytes` bytes.
  char *data(size_t elemBytes) const {
    return const_cast<char *>(aligned) + offset * int64_t(elemBytes);
  }
};

} // namespace grove::rt::cuda

#endif // GROVE_RUNTIME_CUDA_DEVICEVIEW_H
