//===- LegalizeMemRef.cpp - memref ops the LLVM lowering cannot take ------===//
//
// Two upstream gaps, each closed by one pattern:
//  * memref.copy between buffers that are not both contiguous lowers to a
//    call of `memrefCopy` from MLIR's C runner utilities, a library the
//    generated code must not depend on: as linalg.copy it becomes loops.
//    Contiguous copies stay (they become memcpy).
//  * expand-strided-metadata in MLIR 22 crashes on a memref.expand_shape with
//    several dynamic sizes in one reassociation group (llvm-project#186830,
//    fixed in 23): such an expansion is rewritten as a reinterpret_cast with
//    strides computed from its output_shape.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVELEGALIZEMEMREF
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {
struct StridedCopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    auto src = dyn_cast<MemRefType>(op.getSource().getType());
    auto dst = dyn_cast<MemRefType>(op.getTarget().getType());
    if (!src || !dst)
      return rewriter.notifyMatchFailure(op, "unranked copy");
    if (src.getLayout().isIdentity() && dst.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "contiguous copy is a memcpy");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }
};

struct MultiDynamicExpandToCast : OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    MemRefType result = op.getResultType();
    bool needed = llvm::any_of(op.getReassociationIndices(), [&](auto group) {
      return llvm::count_if(
                 group, [&](int64_t d) { return result.isDynamicDim(d); }) > 1;
    });
    if (!needed)
      return rewriter.notifyMatchFailure(op, "expand-strided-metadata copes");
    Location loc = op.getLoc();
    auto meta =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    SmallVector<OpFoldResult> strides(result.getRank());
    // Within a group the innermost dimension keeps the source stride; each
    // outer one strides over the product of the sizes inside it.
    for (auto [srcDim, group] : llvm::enumerate(op.getReassociationIndices())) {
      OpFoldResult stride = meta.getStrides()[srcDim];
      for (int64_t d : llvm::reverse(group)) {
        strides[d] = stride;
        Value s = getValueOrCreateConstantIndexOp(rewriter, loc, stride);
        Value n = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[d]);
        stride = arith::MulIOp::create(rewriter, loc, s, n).getResult();
      }
    }
    // Where the result type fixes a stride or the offset, it must be given
    // statically (the verifier compares attributes, not values).
    auto [staticStrides, staticOffset] = result.getStridesAndOffset();
    for (auto [i, s] : llvm::enumerate(staticStrides))
      if (!ShapedType::isDynamic(s))
        strides[i] = rewriter.getIndexAttr(s);
    OpFoldResult offset = ShapedType::isDynamic(staticOffset)
                              ? OpFoldResult(meta.getOffset())
                              : rewriter.getIndexAttr(staticOffset);
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        op, result, op.getSrc(), offset, sizes, strides);
    return success();
  }
};

struct GroveLegalizeMemRefPass
    : grove::impl::GroveLegalizeMemRefBase<GroveLegalizeMemRefPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLinalg, MultiDynamicExpandToCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
