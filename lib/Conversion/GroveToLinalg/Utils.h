//===- Utils.h - Helpers shared by the grove-to-linalg patterns -*- C++ -*-===//

#ifndef GROVE_LIB_CONVERSION_GROVETOLINALG_UTILS_H
#define GROVE_LIB_CONVERSION_GROVETOLINALG_UTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::grove {

/// `tensor.empty` of `type` whose dynamic sizes are taken from `dims`
/// (one OpFoldResult per dimension of `type`).
Value createEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<OpFoldResult> dims);

/// The sizes of `v` as OpFoldResults (constants for static dimensions,
/// `tensor.dim` for dynamic ones).
SmallVector<OpFoldResult> getDims(OpBuilder &b, Location loc, Value v);

/// Sizes of an elementwise result with shape `resultType`. A dynamic size
/// comes from the operands that are not broadcast along it; where several
/// are, `grove.agree_dims` checks them at run time, and `operands` is
/// updated to slices of the agreed size so no loop reads past a buffer.
SmallVector<OpFoldResult>
getBroadcastResultDims(OpBuilder &b, Location loc, RankedTensorType resultType,
                       SmallVectorImpl<Value> &operands, StringRef opName);

/// `grove.agree_dims` of two sizes, folded away when they are provably
/// equal. `what` names the sizes for the run-time message; the location of
/// `loc` is prepended.
Value agreeDims(OpBuilder &b, Location loc, Value lhs, Value rhs,
                const Twine &what);

/// `size`, checked at run time to be at least `least` (`grove.agree_dims`
/// with `at_least`): the call fails with "<what> of at least <least>, got
/// <size>" and the code goes on with `size`.
Value requireAtLeast(OpBuilder &b, Location loc, Value size, Value least,
                     const Twine &what);

/// `v` restricted to `sizes` (a zero-offset extract_slice), or `v` itself
/// when the sizes are already its own.
Value sliceToSizes(OpBuilder &b, Location loc, Value v,
                   ArrayRef<OpFoldResult> sizes);

/// Indexing map from the iteration space of `resultRank` loops to an
/// operand of `operandShape` aligned at the trailing dimension: a static 1
/// that the result stretches reads index 0.
AffineMap getBroadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                          ArrayRef<int64_t> resultShape);

/// The fastmath flags of an accumulation in a reduction body: `reassoc`
/// lets LLVM vectorize the reduction (summing in a different order, within
/// the tests' tolerances); without it every add waits for the previous one.
arith::FastMathFlagsAttr getReductionFastMath(MLIRContext *ctx);

/// In a linalg.generic body: `table[id, rest...]` where 0 <= id < `rows`
/// (an index), else a zero of `element`; `id` is an i32 (gathers and
/// embeddings read rows by it, never out of bounds).
Value readRowOrZero(OpBuilder &b, Location loc, Value table, Value id,
                    Value rows, ValueRange rest, Type element);

/// A float constant of `type` (scalar).
Value createFloat(OpBuilder &b, Location loc, Type type, double value);

/// `linalg.fill` of `value` into a `bufferization.alloc_tensor` of `type`
/// (sizes as for createEmpty): the initial value of a GEMM or reduction. An
/// allocation rather than a `tensor.empty`, so that CSE does not merge the
/// inits of different ops (see Utils.cpp).
Value filled(OpBuilder &b, Location loc, RankedTensorType type,
             ArrayRef<OpFoldResult> dims, Value value);

/// The type sums of `elt` accumulate in: f32 for f16/bf16, since sums of
/// thousands of such terms keep few of their bits (a bf16 sum over 56x56
/// stalls far below the true value); `elt` otherwise.
Type getAccumulatorType(Type elt);

/// `v` (a float scalar) extended or truncated to `to`.
Value castFloat(OpBuilder &b, Location loc, Value v, Type to);

/// `input` summed, or with `mean` averaged, over the sorted, normalised
/// `axes` (dropped): accumulated in getAccumulatorType, divided there, and
/// rounded to the element type once (Reduction.cpp; grove.reduce_sum,
/// reduce_mean and global_avg_pool).
Value buildSumOrMean(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, bool mean);

} // namespace mlir::grove

#endif // GROVE_LIB_CONVERSION_GROVETOLINALG_UTILS_H
