//===- HalfFloat.h - f16 and bf16 arithmetic for the collectives -*- C++
//-*-===//
//
// MPI has no 16-bit float type: the communicator sums f16 and bf16 with a
// user-defined operation that widens to f32, adds and rounds back (to
// nearest even), and scales means the same way. Where the CPU has F16C the
// f16 conversions run several at a time (chosen at run time: the runtime
// is built for the portable baseline), to the same bits but NaN payloads.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_HALFFLOAT_H
#define GROVE_RT_HALFFLOAT_H

#include <cstdint>

namespace grove::rt {

float halfToFloat(uint16_t h, bool bf16);
uint16_t floatToHalf(float f, bool bf16);

/// inout[i] = round(in[i] + inout[i]), the sum taken in f32.
void addHalves(const uint16_t *in, uint16_t *inout, int64_t n, bool bf16);
/// data[i] = round(data[i] * factor), the product taken in f64.
void scaleHalves(uint16_t *data, int64_t n, double factor, bool bf16);

} // namespace grove::rt

#endif // GROVE_RT_HALFFLOAT_H
