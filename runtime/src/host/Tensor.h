//===- Tensor.h - Shape arithmetic, buffers and DLTensor checks -*- C++ -*-===//
#ifndef GROVE_RT_TENSOR_H
#define GROVE_RT_TENSOR_H

#include "Descriptor.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace grove::rt {

/// Alignment of every buffer the runtime allocates (weights, results): a cache
/// line, and enough for any vector load the generated code may emit.
constexpr size_t kBufferAlignment = 64;

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t, FreeDeleter>;

/// Allocates `bytes` (rounded up to kBufferAlignment, at least one block) with
/// kBufferAlignment alignment; null on failure. Zeroed if `zero`.
Buffer allocateBuffer(size_t bytes, bool zero = false);

/// Element count of `shape` (entries >= 0) into `count`; false on overflow of
/// size_t. A zero dimension gives 0 even if other dimensions are huge.
bool elementCount(const int64_t *shape, size_t ndim, size_t &count);

/// count * elemBytes into `bytes`; false on overflow.
bool byteCount(size_t count, size_t elemBytes, size_t &bytes);

/// Fills `strides` with compact row-major strides for `shape`.
void compactStrides(const int64_t *shape, size_t ndim, int64_t *strides);

/// True if `strides` describe compact row-major layout of `shape`. Strides of
/// size-1 dimensions are ignored (they are never used to address memory, and
/// frameworks such as PyTorch leave arbitrary values there); an empty tensor
/// is always compact.
bool isCompact(const int64_t *shape, const int64_t *strides, size_t ndim);

/// Copies a strided tensor into compact row-major `dst`. Strides are in
/// elements and may be negative or zero; `src` points at element 0.
void stridedCopy(uint8_t *dst, const uint8_t *src, const int64_t *shape,
                 const int64_t *strides, size_t ndim, size_t elemBytes);

/// Validates a caller's DLTensor against `sig`: non-NULL, on `expected`
/// (type and ordinal), dtype, rank, dimensions (negative, static mismatch),
/// element count overflow, NULL/misaligned data, and (if `requireCompact`)
/// compact strides. `what` names the argument for messages, e.g.
/// "entry 'f' input 0 'x'".
grove_status checkTensor(const DLTensor *tensor, const TensorDesc &sig,
                         const std::string &what, bool requireCompact,
                         DLDevice expected = DLDevice{kDLCPU, 0});

/// Checks that the `count` integers of dtype `dtype` at `values` (host
/// memory) lie in [0, below): the first that does not is an
/// INVALID_ARGUMENT naming `what`, its flat index and its value.
grove_status checkBelow(const void *values, size_t count, DLDataType dtype,
                        int64_t below, const std::string &what);

/// "kDLCUDA:0" and the like, for messages.
std::string deviceName(DLDevice device);

/// Address of element 0 of a DLTensor (data + byte_offset).
inline uint8_t *tensorData(const DLTensor &t) {
  return static_cast<uint8_t *>(t.data) + t.byte_offset;
}

/// Shape like `[2, ?, 64]` for messages; negative values print as `?` unless
/// `literal` (used for strides).
std::string shapeString(const int64_t *shape, size_t ndim,
                        bool literal = false);

} // namespace grove::rt

#endif // GROVE_RT_TENSOR_H
