//===- LinalgToBlas.cpp - f32 memref matmuls to runtime BLAS calls --------===//
//
// On the host, OpenBLAS's sgemm is 10-50x faster than the loops
// convert-linalg-to-loops would produce, and it owns its own threading. The
// generated code calls the runtime (abi.h), never BLAS directly, so the
// runtime can swap the library without recompiling models.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::grove {
#define GEN_PASS_DEF_CONVERTLINALGTOBLAS
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// Transpose flags of a matmul from its indexing maps over
/// (batch?, m, n, k); failure for anything but plain or transposed operands.
static FailureOr<std::pair<bool, bool>>
getTransposeFlags(ArrayRef<AffineMap> maps, bool batched) {
  MLIRContext *ctx = maps.front().getContext();
  unsigned nb = batched ? 1 : 0;
  auto dims = [&](std::initializer_list<unsigned> ds) {
    SmallVector<AffineExpr> exprs;
    if (batched)
      exprs.push_back(getAffineDimExpr(0, ctx));
    for (unsigned d : ds)
      exprs.push_back(getAffineDimExpr(nb + d, ctx));
    return AffineMap::get(nb + 3, 0, exprs, ctx);
  };
  // m = 0, n = 1, k = 2 (after the batch dimension).
  if (maps[2] != dims({0, 1}))
    return failure();
  bool transA, transB;
  if (maps[0] == dims({0, 2}))
    transA = false;
  else if (maps[0] == dims({2, 0}))
    transA = true;
  else
    return failure();
  if (maps[1] == dims({2, 1}))
    transB = false;
  else if (maps[1] == dims({1, 2}))
    transB = true;
  else
    return failure();
  return std::make_pair(transA, transB);
}

/// The fully dynamic strided memref type of `rank` the runtime accepts.
static MemRefType getDynamicStridedType(MLIRContext *ctx, int64_t rank) {
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides);
  return MemRefType::get(shape, Float32Type::get(ctx), layout);
}

/// Declares (once) the runtime function `name` for operands of `rank`.
static func::FuncOp getOrDeclare(ModuleOp module, StringRef name,
                                 int64_t rank) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type memref = getDynamicStridedType(ctx, rank);
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto type = FunctionType::get(ctx, {i32, i32, f32, f32, memref, memref, memref},
                                {});
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

/// True when `fill` writes 0.0 into `buffer` and is the op right before
/// `user`, so the matmul may overwrite instead of accumulate.
static bool isZeroFillOf(Operation *prev, Value buffer) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
  if (!fill || fill.getOutputs()[0] != buffer)
    return false;
  return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

template <typename MatmulLike>
static LogicalResult rewriteMatmul(ModuleOp module, MatmulLike op,
                                   StringRef callee, bool batched) {
  if (!op.hasPureBufferSemantics())
    return failure();
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t || !t.getElementType().isF32())
      return failure();
  }
  FailureOr<std::pair<bool, bool>> flags =
      getTransposeFlags(op.getIndexingMapsArray(), batched);
  if (failed(flags))
    return failure();

  int64_t rank = batched ? 3 : 2;
  func::FuncOp fn = getOrDeclare(module, callee, rank);
  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  Value c = op.getDpsInits()[0];
  Operation *prev = op->getPrevNode();
  bool overwrite = isZeroFillOf(prev, c);
  if (overwrite)
    rewriter.eraseOp(prev);

  SmallVector<Value> args = {
      arith::ConstantIntOp::create(rewriter, loc, flags->first, 32),
      arith::ConstantIntOp::create(rewriter, loc, flags->second, 32),
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(1.0)),
      arith::ConstantOp::create(rewriter, loc,
                                rewriter.getF32FloatAttr(overwrite ? 0.0
                                                                   : 1.0))};
  Type dynType = getDynamicStridedType(rewriter.getContext(), rank);
  for (Value v : {op.getDpsInputs()[0], op.getDpsInputs()[1], c})
    args.push_back(memref::CastOp::create(rewriter, loc, dynType, v));
  func::CallOp::create(rewriter, loc, fn, args);
  rewriter.eraseOp(op);
  return success();
}

struct ConvertLinalgToBlasPass
    : grove::impl::ConvertLinalgToBlasBase<ConvertLinalgToBlasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> candidates;
    module.walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        candidates.push_back(op);
    });
    // Matmuls that do not fit (mixed types, broadcast maps) stay linalg and
    // are lowered to loops like any other structured op.
    for (Operation *op : candidates) {
      if (auto mm = dyn_cast<linalg::MatmulOp>(op))
        (void)rewriteMatmul(module, mm, "grove_rt_matmul_f32", false);
      else
        (void)rewriteMatmul(module, cast<linalg::BatchMatmulOp>(op),
                            "grove_rt_batch_matmul_f32", true);
    }
  }
};

} // namespace
