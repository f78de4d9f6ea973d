//===- Contraction.cpp - grove.matmul to linalg.matmul / batch_matmul -----===//
//
// Transposes are expressed in the named ops' indexing maps rather than by
// materialising a transposed copy: the host target hands the maps to BLAS as
// transpose flags, the CUDA target to cuBLAS.
//
//===----------------------------------------------------------------------===//

#include "PopulatePatterns.h"
#include "Utils.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

/// Indexing maps over (batch..., m, n, k) for op(A) @ op(B) = C.
static ArrayAttr getMatmulMaps(OpBuilder &b, bool batched, bool transA,
                               bool transB, bool broadcastRhs = false) {
  MLIRContext *ctx = b.getContext();
  unsigned nb = batched ? 1 : 0;
  AffineExpr m = getAffineDimExpr(nb, ctx), n = getAffineDimExpr(nb + 1, ctx),
             k = getAffineDimExpr(nb + 2, ctx);
  SmallVector<AffineExpr> a, bm, c;
  if (batched) {
    AffineExpr batch = getAffineDimExpr(0, ctx);
    a.push_back(batch);
    if (!broadcastRhs)
      bm.push_back(batch);
    c.push_back(batch);
  }
  a.append(transA ? SmallVector<AffineExpr>{k, m}
                  : SmallVector<AffineExpr>{m, k});
  bm.append(transB ? SmallVector<AffineExpr>{n, k}
                   : SmallVector<AffineExpr>{k, n});
  c.append({m, n});
  unsigned numDims = nb + 3;
  return b.getAffineMapArrayAttr({AffineMap::get(numDims, 0, a, ctx),
                                  AffineMap::get(numDims, 0, bm, ctx),
                                  AffineMap::get(numDims, 0, c, ctx)});
}

/// A zero-filled accumulator of `type` for a matmul of `lhs` and `rhs`.
static Value createZeroAccumulator(OpBuilder &b, Location loc,
                                   RankedTensorType type, Value lhs, Value rhs,
                                   bool transA, bool transB) {
  SmallVector<OpFoldResult> lhsDims = getDims(b, loc, lhs);
  SmallVector<OpFoldResult> rhsDims = getDims(b, loc, rhs);
  size_t lr = lhsDims.size(), rr = rhsDims.size();
  SmallVector<OpFoldResult> dims;
  if (type.getRank() == 3)
    dims.push_back(lhsDims[0]);
  dims.push_back(lhsDims[transA ? lr - 1 : lr - 2]);
  dims.push_back(rhsDims[transB ? rr - 2 : rr - 1]);
  return filled(b, loc, type, dims,
                createFloat(b, loc, type.getElementType(), 0.0));
}

struct MatmulLowering : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    bool transA = op.getTransposeLhs(), transB = op.getTransposeRhs();
    RankedTensorType resultType = op.getType();
    int64_t lr = cast<RankedTensorType>(lhs.getType()).getRank();
    int64_t rr = cast<RankedTensorType>(rhs.getType()).getRank();

    // Sizes the types cannot prove equal are checked at run time, and both
    // operands are cut to the agreed size.
    auto agreeAlong = [&](int64_t ld, int64_t rd, StringRef what) {
      auto lt = cast<RankedTensorType>(lhs.getType());
      auto rt = cast<RankedTensorType>(rhs.getType());
      if (!lt.isDynamicDim(ld) || !rt.isDynamicDim(rd))
        return;
      Value l = tensor::DimOp::create(rewriter, loc, lhs, ld);
      Value r = tensor::DimOp::create(rewriter, loc, rhs, rd);
      Value agreed = agreeDims(rewriter, loc, l, r, "grove.matmul " + what);
      SmallVector<OpFoldResult> ls = getDims(rewriter, loc, lhs);
      SmallVector<OpFoldResult> rs = getDims(rewriter, loc, rhs);
      ls[ld] = agreed;
      rs[rd] = agreed;
      lhs = sliceToSizes(rewriter, loc, lhs, ls);
      rhs = sliceToSizes(rewriter, loc, rhs, rs);
    };
    agreeAlong(lr - (transA ? 2 : 1), rr - (transB ? 1 : 2),
               "contracting dimensions");
    if (lr == 3 && rr == 3)
      agreeAlong(0, 0, "batch dimensions");

    // 3x2 (a dense layer over a sequence) shares the rhs across the batch
    // through its indexing map: no copy, and BLAS sees a zero batch stride.
    // linalg rejects a broadcast map that also transposes, so a transposed
    // shared rhs is transposed once (it is usually a small weight) rather
    // than copied per batch.
    bool batched = lr == 3;
    bool broadcastRhs = batched && rr == 2;
    if (broadcastRhs && transB) {
      auto rt = cast<RankedTensorType>(rhs.getType());
      auto transposedType = RankedTensorType::get(
          {rt.getDimSize(1), rt.getDimSize(0)}, rt.getElementType());
      SmallVector<OpFoldResult> dims = getDims(rewriter, loc, rhs);
      Value init =
          createEmpty(rewriter, loc, transposedType, {dims[1], dims[0]});
      rhs = linalg::TransposeOp::create(rewriter, loc, rhs, init,
                                        ArrayRef<int64_t>{1, 0})
                .getResult()[0];
      transB = false;
    }
    Value acc = createZeroAccumulator(rewriter, loc, resultType, lhs, rhs,
                                      transA, transB);
    NamedAttribute maps = rewriter.getNamedAttr(
        "indexing_maps",
        getMatmulMaps(rewriter, batched, transA, transB, broadcastRhs));
    Operation *mm = batched ? linalg::BatchMatmulOp::create(
                                  rewriter, loc, TypeRange{resultType},
                                  ValueRange{lhs, rhs}, ValueRange{acc}, {maps})
                                  .getOperation()
                            : linalg::MatmulOp::create(
                                  rewriter, loc, TypeRange{resultType},
                                  ValueRange{lhs, rhs}, ValueRange{acc}, {maps})
                                  .getOperation();
    rewriter.replaceOp(op, mm->getResults());
    return success();
  }
};

} // namespace

void mlir::grove::populateContractionPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering>(patterns.getContext());
}
