//===- LinalgToBlas.h - Shared pieces of convert-linalg-to-blas -*- C++ -*-===//
//
// Internal to lib/Conversion/LinalgToBlas: the GEMM rewrite
// (LinalgToBlas.cpp) and the convolution rewrite (LinalgToBlasConv.cpp) share
// these.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_LIB_CONVERSION_LINALGTOBLAS_LINALGTOBLAS_H
#define GROVE_LIB_CONVERSION_LINALGTOBLAS_LINALGTOBLAS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::grove::blas {

/// The fully dynamic strided memref type of `rank` the runtime accepts.
MemRefType getDynamicStridedType(Type element, int64_t rank);

/// `memref` as a view of `rank` (fully dynamic strided type) whose sizes
/// and strides `edit` derives from its own, constants where static.
Value editedView(OpBuilder &b, Location loc, Value memref, int64_t rank,
                 function_ref<void(SmallVectorImpl<OpFoldResult> &sizes,
                                   SmallVectorImpl<OpFoldResult> &strides)>
                     edit);

/// The element type every operand of `op` has, all memrefs; null when `op`
/// is not on buffers or mixes types (a library call does not fit).
Type getSharedElementType(linalg::LinalgOp op);

/// True when `prev` is a linalg.fill of 0.0 into `buffer`, so the library
/// call after it may overwrite instead of accumulate.
bool isZeroFillOf(Operation *prev, Value buffer);

/// Rewrites a memref convolution whose output is zero-filled right before
/// it into the runtime's convolution service: grove_rt_conv2d_f32 (host,
/// f32) or grove_rt_cuda_conv2d_<type> (cuda, any float type). A zero
/// padding the compiler materialised is folded into the call (on cuda only
/// where it is symmetric). Returns false when the op does not fit (it stays
/// linalg), failure when the service cannot be declared.
FailureOr<bool> rewriteConv(RewriterBase &rewriter, ModuleOp module,
                            linalg::Conv2DNchwFchwOp op, bool cuda);
FailureOr<bool> rewriteConv(RewriterBase &rewriter, ModuleOp module,
                            linalg::Conv2DNgchwGfchwOp op, bool cuda);
/// A weight gradient in convert-grove-to-linalg's library form (a
/// linalg.generic, NN.cpp) into a zero-filled buffer becomes the host's
/// weight-gradient service call, a materialised zero padding folded in as
/// for rewriteConv. False when the op does not fit or on cuda.
FailureOr<bool> rewriteConvWeightGrad(RewriterBase &rewriter, ModuleOp module,
                                      linalg::GenericOp op, bool cuda);

} // namespace mlir::grove::blas

#endif // GROVE_LIB_CONVERSION_LINALGTOBLAS_LINALGTOBLAS_H
