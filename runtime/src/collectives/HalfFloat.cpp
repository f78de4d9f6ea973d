//===- HalfFloat.cpp - f16 and bf16 arithmetic for the collectives --------===//

#include "HalfFloat.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define GROVE_HAVE_F16C_PATH 1
#endif

using namespace grove::rt;

float grove::rt::halfToFloat(uint16_t h, bool bf16) {
  if (bf16)
    return bf16ToFloat(h);
  uint32_t bits;
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff;
  if (exp == 0x1f)
    bits = sign | 0x7f800000 | (mant << 13);
  else if (exp == 0 && mant == 0)
    bits = sign;
  else if (exp == 0) { // subnormal: normalise
    exp = 127 - 15 + 1;
    while (!(mant & 0x400)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
  } else
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t grove::rt::floatToHalf(float f, bool bf16) {
  if (bf16)
    return floatToBf16(f);
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff)
    return uint16_t(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 0x1f)
    return uint16_t(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10)
      return uint16_t(sign);
    mant |= 0x800000;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1),
             mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, which is the right rounding
  return uint16_t(half);
}

namespace {

#if GROVE_HAVE_F16C_PATH
bool hasF16C() {
  static const bool has =
      __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return has;
}

// Round to nearest even, whatever MXCSR says.
constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

__attribute__((target("f16c,avx"))) int64_t
addF16C(const uint16_t *in, uint16_t *inout, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 a = _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i)));
    __m256 b = _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(inout + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(inout + i),
                     _mm256_cvtps_ph(_mm256_add_ps(a, b), kNearest));
  }
  return i;
}

__attribute__((target("f16c,avx"))) int64_t scaleF16C(uint16_t *data, int64_t n,
                                                      double factor) {
  const __m256d f = _mm256_set1_pd(factor);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m128i h = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(data + i));
    __m256d x = _mm256_mul_pd(_mm256_cvtps_pd(_mm_cvtph_ps(h)), f);
    _mm_storel_epi64(reinterpret_cast<__m128i *>(data + i),
                     _mm_cvtps_ph(_mm256_cvtpd_ps(x), kNearest));
  }
  return i;
}
#endif

} // namespace

void grove::rt::addHalves(const uint16_t *in, uint16_t *inout, int64_t n,
                          bool bf16) {
  int64_t i = 0;
#if GROVE_HAVE_F16C_PATH
  if (!bf16 && hasF16C())
    i = addF16C(in, inout, n);
#endif
  for (; i < n; ++i)
    inout[i] = floatToHalf(
        halfToFloat(in[i], bf16) + halfToFloat(inout[i], bf16), bf16);
}

void grove::rt::scaleHalves(uint16_t *data, int64_t n, double factor,
                            bool bf16) {
  int64_t i = 0;
#if GROVE_HAVE_F16C_PATH
  if (!bf16 && hasF16C())
    i = scaleF16C(data, n, factor);
#endif
  for (; i < n; ++i)
    data[i] = floatToHalf(float(halfToFloat(data[i], bf16) * factor), bf16);
}
