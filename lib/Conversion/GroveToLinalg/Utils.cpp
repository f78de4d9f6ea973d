//===- Utils.cpp - Helpers shared by the grove-to-linalg patterns ---------===//

#include "Utils.h"

#include "llvm/Support/Path.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Support/LocatedMessage.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

/// The values of the dynamic sizes of `type` among `dims`.
static SmallVector<Value> getDynamicSizes(OpBuilder &b, Location loc,
                                          RankedTensorType type,
                                          ArrayRef<OpFoldResult> dims) {
  SmallVector<Value> dynamic;
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(d))
      dynamic.push_back(getValueOrCreateConstantIndexOp(b, loc, dims[i]));
  return dynamic;
}

Value mlir::grove::createEmpty(OpBuilder &b, Location loc,
                               RankedTensorType type,
                               ArrayRef<OpFoldResult> dims) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 getDynamicSizes(b, loc, type, dims));
}

SmallVector<OpFoldResult> mlir::grove::getDims(OpBuilder &b, Location loc,
                                               Value v) {
  return tensor::getMixedSizes(b, loc, v);
}

SmallVector<OpFoldResult> mlir::grove::getBroadcastResultDims(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    SmallVectorImpl<Value> &operands, StringRef opName) {
  int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> dims;
  // Per operand, the sizes it must be sliced to (null: keep its own).
  SmallVector<SmallVector<OpFoldResult>> slices(operands.size());
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = resultType.getDimSize(d);
    if (!ShapedType::isDynamic(size)) {
      dims.push_back(b.getIndexAttr(size));
      continue;
    }
    // The verifier guarantees at least one operand is dynamic along a
    // dynamic result dimension (a static 1 never yields `?` on its own).
    Value agreed;
    SmallVector<std::pair<unsigned, int64_t>> sources;
    for (auto [i, operand] : llvm::enumerate(operands)) {
      auto t = cast<RankedTensorType>(operand.getType());
      int64_t od = d - (rank - t.getRank());
      if (od < 0 || !ShapedType::isDynamic(t.getDimSize(od)))
        continue;
      Value dim = tensor::DimOp::create(b, loc, operand, od);
      agreed = agreed
                   ? agreeDims(b, loc, agreed, dim,
                               opName + " operands " +
                                   Twine(sources.front().first) + " and " +
                                   Twine(i) + ", result dimension " + Twine(d))
                   : dim;
      sources.push_back({i, od});
    }
    assert(agreed && "verifier guarantees a dynamic source dimension");
    dims.push_back(agreed);
    if (sources.size() < 2)
      continue;
    for (auto [i, od] : sources) {
      if (slices[i].empty())
        slices[i] = getDims(b, loc, operands[i]);
      slices[i][od] = agreed;
    }
  }
  for (auto [i, sizes] : llvm::enumerate(slices))
    if (!sizes.empty())
      operands[i] = sliceToSizes(b, loc, operands[i], sizes);
  return dims;
}

Value mlir::grove::readRowOrZero(OpBuilder &b, Location loc, Value table,
                                 Value id, Value rows, ValueRange rest,
                                 Type element) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value inRange = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, rows));
  SmallVector<Value> at = {i};
  llvm::append_range(at, rest);
  auto branch = scf::IfOp::create(
      b, loc, inRange,
      [&](OpBuilder &t, Location tl) {
        scf::YieldOp::create(
            t, tl, tensor::ExtractOp::create(t, tl, table, at).getResult());
      },
      [&](OpBuilder &e, Location el) {
        scf::YieldOp::create(
            e, el,
            arith::ConstantOp::create(e, el, e.getZeroAttr(element))
                .getResult());
      });
  return branch.getResult(0);
}

Value mlir::grove::agreeDims(OpBuilder &b, Location loc, Value lhs, Value rhs,
                             const Twine &what) {
  return b.createOrFold<AgreeDimsOp>(loc, b.getIndexType(), lhs, rhs,
                                     b.getStringAttr(locatedMessage(loc, what)),
                                     /*at_least=*/false);
}

Value mlir::grove::requireAtLeast(OpBuilder &b, Location loc, Value size,
                                  Value least, const Twine &what) {
  Value atLeast = arith::MaxSIOp::create(b, loc, size, least);
  return b.createOrFold<AgreeDimsOp>(loc, b.getIndexType(), atLeast, size,
                                     b.getStringAttr(locatedMessage(loc, what)),
                                     /*at_least=*/true);
}

Value mlir::grove::sliceToSizes(OpBuilder &b, Location loc, Value v,
                                ArrayRef<OpFoldResult> sizes) {
  auto type = cast<RankedTensorType>(v.getType());
  // An empty tensor has nothing to read past (and extract_slice rejects any
  // offset into a zero-size dimension).
  if (llvm::is_contained(type.getShape(), 0))
    return v;
  SmallVector<OpFoldResult> own = getDims(b, loc, v);
  if (llvm::equal(own, sizes))
    return v;
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  // The slice's type follows the sizes; callers keep the original type.
  Value slice =
      tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
  if (slice.getType() == type)
    return slice;
  return tensor::CastOp::create(b, loc, type, slice);
}

AffineMap mlir::grove::getBroadcastMap(MLIRContext *ctx,
                                       ArrayRef<int64_t> operandShape,
                                       ArrayRef<int64_t> resultShape) {
  int64_t rank = resultShape.size();
  int64_t lead = rank - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, d] : llvm::enumerate(operandShape)) {
    bool stretched = d == 1 && resultShape[lead + i] != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(lead + i, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

arith::FastMathFlagsAttr mlir::grove::getReductionFastMath(MLIRContext *ctx) {
  return arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::reassoc);
}

Value mlir::grove::createFloat(OpBuilder &b, Location loc, Type type,
                               double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value mlir::grove::filled(OpBuilder &b, Location loc, RankedTensorType type,
                          ArrayRef<OpFoldResult> dims, Value value) {
  // An allocation, not a tensor.empty: CSE merges equal empties and then
  // their fills, and bufferization copies the one filled buffer into every
  // GEMM or reduction that starts from it (a copy of each output, and no
  // beta = 0 for the BLAS calls).
  Value init = bufferization::AllocTensorOp::create(
      b, loc, type, getDynamicSizes(b, loc, type, dims));
  return linalg::FillOp::create(b, loc, value, init).getResult(0);
}

Type mlir::grove::getAccumulatorType(Type elt) {
  return cast<FloatType>(elt).getWidth() < 32
             ? Float32Type::get(elt.getContext())
             : elt;
}

Value mlir::grove::castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (cast<FloatType>(from).getWidth() < cast<FloatType>(to).getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}
