//===- LinalgToBlas.cpp - memref matmuls to runtime BLAS calls ------------===//
//
// On the host, oneDNN's / OpenBLAS's sgemm is far faster than the loops
// convert-linalg-to-loops would produce, and it owns its own threading; on
// the GPU, cuBLAS is what a generated kernel would have to beat. The
// generated code calls the runtime (abi.h), never the library directly, so
// the runtime can swap the library without recompiling models.
//
//===----------------------------------------------------------------------===//

#include "LinalgToBlas.h"

#include "grove/Conversion/Passes.h"
#include "grove/Conversion/RuntimeServices.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_CONVERTLINALGTOBLAS
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

Value mlir::grove::blas::editedView(
    OpBuilder &b, Location loc, Value memref, int64_t rank,
    function_ref<void(SmallVectorImpl<OpFoldResult> &sizes,
                      SmallVectorImpl<OpFoldResult> &strides)>
        edit) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  SmallVector<OpFoldResult> sizes(meta.getConstifiedMixedSizes());
  SmallVector<OpFoldResult> strides(meta.getConstifiedMixedStrides());
  edit(sizes, strides);
  auto type = getDynamicStridedType(
      cast<MemRefType>(memref.getType()).getElementType(), rank);
  return memref::ReinterpretCastOp::create(
      b, loc, type, memref, meta.getConstifiedMixedOffset(), sizes, strides);
}

MemRefType mlir::grove::blas::getDynamicStridedType(Type element,
                                                    int64_t rank) {
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(element.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(shape, element, layout);
}

Type mlir::grove::blas::getSharedElementType(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return {};
  Type element;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t || (element && t.getElementType() != element))
      return {};
    element = t.getElementType();
  }
  return element;
}

bool mlir::grove::blas::isZeroFillOf(Operation *prev, Value buffer) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
  if (!fill || fill.getOutputs()[0] != buffer)
    return false;
  return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

namespace {
using blas::getDynamicStridedType;
using blas::isZeroFillOf;

struct MatmulForm {
  bool transA = false, transB = false;
  /// Batched only: the lhs / rhs map has no batch dimension (an operand
  /// shared by the whole batch, e.g. the weights of a 1x1 convolution).
  bool broadcastA = false, broadcastB = false;
};

/// The form of a matmul from its indexing maps over (batch?, m, n, k);
/// failure for anything but plain, transposed or (rhs) broadcast operands.
static FailureOr<MatmulForm> getMatmulForm(ArrayRef<AffineMap> maps,
                                           bool batched) {
  MLIRContext *ctx = maps.front().getContext();
  unsigned nb = batched ? 1 : 0;
  auto dimsImpl = [&](std::initializer_list<unsigned> ds, bool withBatch) {
    SmallVector<AffineExpr> exprs;
    if (withBatch)
      exprs.push_back(getAffineDimExpr(0, ctx));
    for (unsigned d : ds)
      exprs.push_back(getAffineDimExpr(nb + d, ctx));
    return AffineMap::get(nb + 3, 0, exprs, ctx);
  };
  auto dims = [&](std::initializer_list<unsigned> ds) {
    return dimsImpl(ds, batched);
  };
  // m = 0, n = 1, k = 2 (after the batch dimension).
  MatmulForm form;
  if (maps[2] != dims({0, 1}))
    return failure();
  bool lhsFound = false;
  SmallVector<bool, 2> lhsBatchForms =
      batched ? SmallVector<bool, 2>{true, false} : SmallVector<bool, 2>{false};
  for (bool withBatch : lhsBatchForms) {
    for (bool trans : {false, true}) {
      if (!lhsFound &&
          maps[0] == dimsImpl(trans ? std::initializer_list<unsigned>{2, 0}
                                    : std::initializer_list<unsigned>{0, 2},
                              withBatch)) {
        form.transA = trans;
        form.broadcastA = batched && !withBatch;
        lhsFound = true;
      }
    }
  }
  if (!lhsFound)
    return failure();
  // The rhs map has the batch dimension when the op is batched, or not at
  // all (a shared rhs); an unbatched op has only the second form.
  SmallVector<bool, 2> rhsBatchForms =
      batched ? SmallVector<bool, 2>{true, false} : SmallVector<bool, 2>{false};
  for (bool withBatch : rhsBatchForms) {
    form.broadcastB = batched && !withBatch;
    if (maps[1] == dimsImpl({2, 1}, withBatch)) {
      form.transB = false;
      return form;
    }
    if (maps[1] == dimsImpl({1, 2}, withBatch)) {
      form.transB = true;
      return form;
    }
  }
  return failure();
}

/// A rank-3 view of the 2-D `matrix` repeated `batch` times (batch stride
/// 0), so the batched BLAS call can share one rhs.
static Value broadcastBatch(OpBuilder &b, Location loc, Value matrix,
                            Value batch) {
  return blas::editedView(b, loc, matrix, 3, [&](auto &sizes, auto &strides) {
    sizes.insert(sizes.begin(), batch);
    strides.insert(strides.begin(), b.getIndexAttr(0));
  });
}

/// The runtime service for a matmul on `element`s, if there is one. The
/// CUDA services are always strided-batched (cuBLAS's general form).
static std::optional<Service> getGemmService(Type element, bool batched,
                                             bool cuda) {
  if (cuda)
    return lookupService(ServiceFamily::CudaGemm, element);
  return lookupService(
      batched ? ServiceFamily::BatchMatmul : ServiceFamily::Matmul, element);
}

/// Rewrites `op` into a runtime GEMM call. Returns false when the op does
/// not fit (it then stays linalg and becomes loops or a kernel), failure
/// when the runtime service cannot be declared.
template <typename MatmulLike>
static FailureOr<bool> rewriteMatmul(RewriterBase &rewriter, ModuleOp module,
                                     MatmulLike op, bool batched, bool cuda) {
  Type element = blas::getSharedElementType(op);
  if (!element)
    return false;
  std::optional<Service> service = getGemmService(element, batched, cuda);
  if (!service)
    return false;
  FailureOr<MatmulForm> form =
      getMatmulForm(op.getIndexingMapsArray(), batched);
  if (failed(form))
    return false;

  int64_t rank = (batched || cuda) ? 3 : 2;
  if (failed(declareService(module, *service)))
    return failure();
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value c = op.getDpsInits()[0];
  Operation *prev = op->getPrevNode();
  bool overwrite = isZeroFillOf(prev, c);
  if (overwrite)
    rewriter.eraseOp(prev);

  SmallVector<Value> args = {
      arith::ConstantIntOp::create(rewriter, loc, form->transA, 32),
      arith::ConstantIntOp::create(rewriter, loc, form->transB, 32),
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(1.0)),
      arith::ConstantOp::create(
          rewriter, loc, rewriter.getF32FloatAttr(overwrite ? 0.0 : 1.0))};
  Value lhs = op.getDpsInputs()[0];
  Value rhs = op.getDpsInputs()[1];
  if (form->broadcastA)
    lhs = broadcastBatch(rewriter, loc, lhs,
                         memref::DimOp::create(rewriter, loc, c, 0));
  if (form->broadcastB)
    rhs = broadcastBatch(rewriter, loc, rhs,
                         memref::DimOp::create(rewriter, loc, c, 0));
  if (!batched && rank == 3) {
    // A 2-D matmul as a batch of one.
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    lhs = broadcastBatch(rewriter, loc, lhs, one);
    rhs = broadcastBatch(rewriter, loc, rhs, one);
    c = broadcastBatch(rewriter, loc, c, one);
  }
  llvm::append_range(args, ValueRange{lhs, rhs, c});
  if (failed(createServiceCall(rewriter, loc, module, *service, args)))
    return failure();
  rewriter.eraseOp(op);
  return true;
}

/// One library call per fitting op. Ops that do not fit (mixed types,
/// broadcast maps, an output not zero-filled) stay linalg and are lowered
/// to loops or kernels like any other structured op.
template <typename OpTy> struct LinalgToLibraryCall : OpRewritePattern<OpTy> {
  LinalgToLibraryCall(MLIRContext *ctx, bool cuda, bool &declarationFailed)
      : OpRewritePattern<OpTy>(ctx), cuda(cuda),
        declarationFailed(declarationFailed) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto module = op->template getParentOfType<ModuleOp>();
    FailureOr<bool> rewritten = rewrite(rewriter, module, op);
    if (failed(rewritten)) {
      declarationFailed = true;
      return failure();
    }
    return success(*rewritten);
  }

private:
  FailureOr<bool> rewrite(RewriterBase &rewriter, ModuleOp module,
                          OpTy op) const {
    if constexpr (std::is_same_v<OpTy, linalg::MatmulOp>)
      return rewriteMatmul(rewriter, module, op, /*batched=*/false, cuda);
    else if constexpr (std::is_same_v<OpTy, linalg::BatchMatmulOp>)
      return rewriteMatmul(rewriter, module, op, /*batched=*/true, cuda);
    else if constexpr (std::is_same_v<OpTy, linalg::GenericOp>)
      return blas::rewriteConvWeightGrad(rewriter, module, op, cuda);
    else
      return blas::rewriteConv(rewriter, module, op, cuda);
  }

  bool cuda;
  bool &declarationFailed;
};

struct ConvertLinalgToBlasPass
    : grove::impl::ConvertLinalgToBlasBase<ConvertLinalgToBlasPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool cuda = target == CompileTarget::Cuda, declarationFailed = false;
    RewritePatternSet patterns(&getContext());
    patterns.add<LinalgToLibraryCall<linalg::MatmulOp>,
                 LinalgToLibraryCall<linalg::BatchMatmulOp>,
                 LinalgToLibraryCall<linalg::Conv2DNchwFchwOp>,
                 LinalgToLibraryCall<linalg::Conv2DNgchwGfchwOp>,
                 LinalgToLibraryCall<linalg::GenericOp>>(&getContext(), cuda,
                                                         declarationFailed);
    // A rewrite erases the zero fill and padding copies before its op, so
    // the greedy driver (not the walk driver, which only lets a pattern
    // erase its root) applies the patterns, once each, to the ops there are.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps)
        .enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(module, std::move(patterns), config)) ||
        declarationFailed)
      signalPassFailure();
  }
};

} // namespace
