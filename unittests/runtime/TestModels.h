//===- TestModels.h - Hand-written stand-ins for grovec output -*- C++ -*-===//
//
// Each model below is what grovec would emit: a grove_model_def with a
// descriptor and packed entry functions that follow docs/abi.md, written by
// hand so that the runtime can be tested without the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_UNITTESTS_TESTMODELS_H
#define GROVE_UNITTESTS_TESTMODELS_H

#include "grove/abi.h"

#include <cstdint>

namespace grove::test {

/// A rank-R memref descriptor, as the generated code sees it.
template <int R> struct Memref {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[R];
  int64_t strides[R];
};
struct Memref0 {
  void *allocated;
  void *aligned;
  int64_t offset;
};

/// `addmodel`: one param `w: f32[4]` and entries (index: name):
///  0 add(x: f32[?,4]) -> y = x + w (broadcast over rows)
///  1 identity(x: f32[?]) -> x itself (returns the input buffer)
///  2 constant() -> f32[3] backed by a global (0xdeadbeef sentinel)
///  3 transpose(x: f32[2,3]) -> f32[3,2] as a strided view of a fresh buffer
///  4 param_alias() -> w itself (returns the param buffer)
///  5 twice(x: f32[?]) -> (a, b): the same buffer returned twice
///  6 stats(x: f32[?,4]) -> (rowsum: f32[?], total: f32[]) mixed ranks
///  7 bad_shape() -> f32[3] but reports size -5
///  8 wrong_static() -> f32[3] but reports size 4
///  9 bad_matmul() -> calls grove_rt_matmul_f32 with mismatched shapes
/// 10 matmul(a: f32[?,?], b: f32[?,?]) -> a @ b via grove_rt_matmul_f32
/// 11 nothing() -> no inputs, no outputs
/// 12 bounded(labels: i32[?], every value below 4) -> counts its calls
extern const grove_model_def addmodel_model;

/// Same descriptor as addmodel but another object: a context created for one
/// must be rejected when called through the other.
extern const grove_model_def addmodel_twin_model;

/// `two`: params `a: f32[2,2]`, `b: i32[3]`, no entries. For weight tests.
extern const grove_model_def two_model;

/// How many times `bounded` ran.
int boundedCalls();

/// Frees the buffer `bad_shape` leaked (the runtime must not free it).
void freeBadShapeBuffer();

/// Typed wrapper like grovec's `addmodel_add`.
int32_t addmodel_add(struct grove_context *ctx, const void *x, void *out0);

} // namespace grove::test

#endif // GROVE_UNITTESTS_TESTMODELS_H
