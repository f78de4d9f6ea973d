//===- HalfFloat.h - f16 and bf16 arithmetic for the collectives -*- C++
//-*-===//
//
// MPI has no 16-bit float type: the communicator sums f16 and bf16 with a
// user-defined operation that widens to f32, adds and rounds back (to
// nearest even), and scales means the same way. Where the CPU has F16C the
// f16 conversions run several at a time (chosen at run time: the runtime
// is built for the portable baseline), to the same bits but NaN payloads.
// The bf16 GEMM (src/host/Blas.cpp) rounds its f32 products with the same
// bf16 conversion, inline here so that its loop over C vectorises.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_HALFFLOAT_H
#define GROVE_RT_HALFFLOAT_H

#include <cstdint>
#include <cstring>

namespace grove::rt {

/// bf16 is the top half of an f32: widening is exact.
inline float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// Round to nearest even; a NaN stays a (quiet) NaN, where adding the
/// rounding bias could carry it into infinity.
inline uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  if ((x & 0x7fffffff) > 0x7f800000)
    return uint16_t((x >> 16) | 0x40);
  return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

float halfToFloat(uint16_t h, bool bf16);
uint16_t floatToHalf(float f, bool bf16);

/// inout[i] = round(in[i] + inout[i]), the sum taken in f32.
void addHalves(const uint16_t *in, uint16_t *inout, int64_t n, bool bf16);
/// data[i] = round(data[i] * factor), the product taken in f64.
void scaleHalves(uint16_t *data, int64_t n, double factor, bool bf16);

} // namespace grove::rt

#endif // GROVE_RT_HALFFLOAT_H
