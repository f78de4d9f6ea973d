//===- Utils.cpp - Helpers shared by the grove-to-linalg patterns ---------===//

#include "Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

Value mlir::grove::createEmpty(OpBuilder &b, Location loc,
                               RankedTensorType type,
                               ArrayRef<OpFoldResult> dims) {
  SmallVector<Value> dynamic;
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(d))
      dynamic.push_back(getValueOrCreateConstantIndexOp(b, loc, dims[i]));
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType(), dynamic);
}

SmallVector<OpFoldResult> mlir::grove::getDims(OpBuilder &b, Location loc,
                                               Value v) {
  return tensor::getMixedSizes(b, loc, v);
}

SmallVector<OpFoldResult>
mlir::grove::getBroadcastResultDims(OpBuilder &b, Location loc,
                                    RankedTensorType resultType,
                                    ValueRange operands) {
  int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> dims;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = resultType.getDimSize(d);
    if (!ShapedType::isDynamic(size)) {
      dims.push_back(b.getIndexAttr(size));
      continue;
    }
    // A dynamic result dimension comes from an operand whose aligned
    // dimension is dynamic too (verified: a static 1 never yields `?`
    // unless the other side is `?`).
    OpFoldResult found;
    for (Value operand : operands) {
      auto t = cast<RankedTensorType>(operand.getType());
      int64_t od = d - (rank - t.getRank());
      if (od < 0 || !ShapedType::isDynamic(t.getDimSize(od)))
        continue;
      found = tensor::DimOp::create(b, loc, operand, od).getResult();
      break;
    }
    assert(found && "verifier guarantees a dynamic source dimension");
    dims.push_back(found);
  }
  return dims;
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

Value mlir::grove::createFloat(OpBuilder &b, Location loc, Type type,
                               double value) {
  return arith::ConstantOp::create(b, loc, type,
                                   b.getFloatAttr(type, value));
}
