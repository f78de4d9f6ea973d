//===- Tensor.cpp - Shape arithmetic, buffers and DLTensor checks ---------===//

#include "Tensor.h"

#include "DType.h"
#include "Error.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace grove::rt {

Buffer allocateBuffer(size_t bytes, bool zero) {
  size_t rounded =
      (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  if (rounded < bytes)
    return nullptr; // overflowed while rounding up
  if (rounded == 0)
    rounded = kBufferAlignment; // callers may rely on a non-null pointer
  void *p = nullptr;
  if (posix_memalign(&p, kBufferAlignment, rounded) != 0)
    return nullptr;
  if (zero)
    std::memset(p, 0, rounded);
  return Buffer(static_cast<uint8_t *>(p));
}

bool elementCount(const int64_t *shape, size_t ndim, size_t &count) {
  for (size_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) {
      count = 0;
      return true;
    }
  }
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i)
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(shape[i]), &n))
      return false;
  count = n;
  return true;
}

bool byteCount(size_t count, size_t elemBytes, size_t &bytes) {
  return !__builtin_mul_overflow(count, elemBytes, &bytes);
}

void compactStrides(const int64_t *shape, size_t ndim, int64_t *strides) {
  int64_t stride = 1;
  for (size_t i = ndim; i-- > 0;) {
    strides[i] = stride;
    // Shapes reaching here have a checked element count, so this cannot
    // overflow; treating 0 as 1 keeps strides meaningful past empty dims.
    stride *= shape[i] > 1 ? shape[i] : 1;
  }
}

bool isCompact(const int64_t *shape, const int64_t *strides, size_t ndim) {
  int64_t expected = 1;
  for (size_t i = ndim; i-- > 0;) {
    if (shape[i] == 0)
      return true;
  }
  for (size_t i = ndim; i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected)
      return false;
    expected *= shape[i];
  }
  return true;
}

void stridedCopy(uint8_t *dst, const uint8_t *src, const int64_t *shape,
                 const int64_t *strides, size_t ndim, size_t elemBytes) {
  size_t count = 0;
  if (!elementCount(shape, ndim, count) || count == 0)
    return;
  if (ndim == 0) {
    std::memcpy(dst, src, elemBytes);
    return;
  }
  // Walk all rows (every dimension but the last) with an index counter;
  // copy each row in one memcpy when it is contiguous.
  const size_t inner = static_cast<size_t>(shape[ndim - 1]);
  const int64_t innerStride = strides[ndim - 1];
  std::vector<int64_t> index(ndim - 1, 0);
  const size_t rows = count / inner;
  for (size_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (size_t d = 0; d + 1 < ndim; ++d)
      offset += index[d] * strides[d];
    const uint8_t *from = src + offset * static_cast<int64_t>(elemBytes);
    if (innerStride == 1) {
      // memmove: set_weight may copy a param onto itself via a view.
      std::memmove(dst, from, inner * elemBytes);
      dst += inner * elemBytes;
    } else {
      for (size_t k = 0; k < inner; ++k, dst += elemBytes)
        std::memcpy(dst,
                    from + static_cast<int64_t>(k) * innerStride *
                               static_cast<int64_t>(elemBytes),
                    elemBytes);
    }
    for (size_t d = ndim - 1; d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

std::string shapeString(const int64_t *shape, size_t ndim, bool literal) {
  std::string s = "[";
  for (size_t i = 0; i < ndim; ++i) {
    if (i)
      s += ", ";
    s += shape[i] < 0 && !literal ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

std::string deviceName(DLDevice d) {
  std::string kind = d.device_type == kDLCPU    ? "kDLCPU"
                     : d.device_type == kDLCUDA ? "kDLCUDA"
                     : d.device_type == kDLCUDAHost
                         ? "kDLCUDAHost"
                         : "device_type " + std::to_string(d.device_type);
  return kind + ":" + std::to_string(d.device_id);
}

/// The end of the user address space: no allocation of this process lies
/// at or above it (x86-64 Linux hands out 47-bit user addresses unless asked
/// for more, 64-bit ARM 48-bit ones).
#if defined(__x86_64__)
constexpr __int128 kAddressSpaceEnd = __int128(1) << 47;
#else
constexpr __int128 kAddressSpaceEnd = __int128(1) << 48;
#endif

/// True when every byte a (non-empty) tensor addresses - from data +
/// byte_offset, through its strides or compact - lies in the user address
/// space, with byte offsets that fit in int64_t (stridedCopy, generated
/// code). Reaching past the caller's buffer but inside the address space is
/// the caller's bug; this catches what would make the runtime read at
/// wrapped-around or impossible addresses.
static bool reachInAddressSpace(const DLTensor &t, size_t rank,
                                size_t elemBytes) {
  __int128 low = 0, high = 0;
  if (t.strides) {
    for (size_t i = 0; i < rank; ++i) {
      // (size - 1) < 2^63 and |stride| <= 2^63: the product fits in 127
      // bits.
      __int128 span = static_cast<__int128>(t.shape[i] - 1) * t.strides[i];
      if (span > INT64_MAX || span < INT64_MIN)
        return false;
      (span < 0 ? low : high) += span * static_cast<__int128>(elemBytes);
    }
  } else {
    size_t count = 0;
    elementCount(t.shape, rank, count);
    high = static_cast<__int128>(count - 1) * elemBytes;
  }
  if (high + static_cast<__int128>(elemBytes) > INT64_MAX || low < INT64_MIN)
    return false;
  const __int128 base = reinterpret_cast<uintptr_t>(t.data) +
                        static_cast<__int128>(t.byte_offset);
  return base + low >= 0 &&
         base + high + static_cast<__int128>(elemBytes) <= kAddressSpaceEnd;
}

grove_status checkTensor(const DLTensor *t, const TensorDesc &sig,
                         const std::string &what, bool requireCompact,
                         DLDevice expected) {
  auto bad = [&](const std::string &message) {
    return fail(GROVE_ERROR_INVALID_ARGUMENT, what + ": " + message);
  };
  if (!t)
    return bad("tensor is NULL");
  if (expected.device_type == kDLCPU && t->device.device_type != kDLCPU)
    return bad("device_type " + std::to_string(t->device.device_type) +
               " is not kDLCPU (" + std::to_string(kDLCPU) +
               "); this model runs on the host");
  if (t->device.device_type != expected.device_type ||
      t->device.device_id != expected.device_id)
    return bad("tensor is on " + deviceName(t->device) +
               ", but this model runs on " + deviceName(expected));
  if (!sameDType(t->dtype, sig.dtype))
    return bad("expected dtype " + dtypeName(sig.dtype) + ", got " +
               dtypeName(t->dtype));
  const size_t rank = sig.shape.size();
  if (t->ndim < 0 || static_cast<size_t>(t->ndim) != rank)
    return bad("expected rank " + std::to_string(rank) + " " +
               shapeString(sig.shape.data(), rank) + ", got rank " +
               std::to_string(t->ndim));
  if (rank > 0 && !t->shape)
    return bad("shape is NULL");
  for (size_t i = 0; i < rank; ++i) {
    if (t->shape[i] < 0)
      return bad("dimension " + std::to_string(i) + " is negative (" +
                 std::to_string(t->shape[i]) + ")");
    if (sig.shape[i] >= 0 && t->shape[i] != sig.shape[i])
      return bad("dimension " + std::to_string(i) + " is " +
                 std::to_string(t->shape[i]) + ", expected " +
                 std::to_string(sig.shape[i]) + " (shape " +
                 shapeString(sig.shape.data(), rank) + ")");
  }
  size_t count = 0, bytes = 0;
  const size_t elemBytes = elementBytes(t->dtype);
  if (!elementCount(t->shape, rank, count) ||
      !byteCount(count, elemBytes, bytes) ||
      bytes > static_cast<size_t>(INT64_MAX))
    return bad("shape " + shapeString(t->shape, rank) + " is too large");
  if (count > 0) {
    if (!t->data)
      return bad("data is NULL but the tensor has " + std::to_string(count) +
                 " elements");
    if (t->byte_offset > UINTPTR_MAX - reinterpret_cast<uintptr_t>(t->data))
      return bad("data + byte_offset " + std::to_string(t->byte_offset) +
                 " wraps around the address space");
    if (!reachInAddressSpace(*t, rank, elemBytes))
      return bad(t->strides
                     ? "strides " + shapeString(t->strides, rank, true) +
                           " for shape " + shapeString(t->shape, rank) +
                           " reach past the address space"
                     : "data + byte_offset " + std::to_string(t->byte_offset) +
                           " with shape " + shapeString(t->shape, rank) +
                           " reaches past the address space");
    if (reinterpret_cast<uintptr_t>(tensorData(*t)) % elemBytes != 0)
      return bad("data + byte_offset is not aligned to " +
                 std::to_string(elemBytes) + " bytes");
    if (requireCompact && t->strides && !isCompact(t->shape, t->strides, rank))
      return bad("strides " + shapeString(t->strides, rank, true) +
                 " are not compact row-major for shape " +
                 shapeString(t->shape, rank) + "; pass a contiguous tensor");
  }
  return GROVE_OK;
}

namespace {
template <typename T>
size_t firstOutside(const void *values, size_t count, int64_t below,
                    int64_t &value) {
  const T *v = static_cast<const T *>(values);
  for (size_t i = 0; i < count; ++i) {
    if (v[i] < 0 || static_cast<int64_t>(v[i]) >= below) {
      value = static_cast<int64_t>(v[i]);
      return i;
    }
  }
  return count;
}
} // namespace

grove_status checkBelow(const void *values, size_t count, DLDataType dtype,
                        int64_t below, const std::string &what) {
  int64_t value = 0;
  size_t at = count;
  switch (dtype.bits) {
  case 8:
    at = firstOutside<int8_t>(values, count, below, value);
    break;
  case 16:
    at = firstOutside<int16_t>(values, count, below, value);
    break;
  case 32:
    at = firstOutside<int32_t>(values, count, below, value);
    break;
  case 64:
    at = firstOutside<int64_t>(values, count, below, value);
    break;
  default:
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                what + ": cannot check the values of a " +
                    std::to_string(dtype.bits) + "-bit integer");
  }
  if (at == count)
    return GROVE_OK;
  return fail(GROVE_ERROR_INVALID_ARGUMENT,
              what + ": element " + std::to_string(at) + " is " +
                  std::to_string(value) + ", outside [0, " +
                  std::to_string(below) + ")");
}

} // namespace grove::rt
