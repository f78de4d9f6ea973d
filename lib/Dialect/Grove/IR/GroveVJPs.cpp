//===- GroveVJPs.cpp - Vector-Jacobian products of the grove ops ----------===//
//
// Each differentiable op's VJPOpInterface::buildVJP: the cotangents of its
// operands from those of its results, in grove ops, reading only the op's
// own operands and results (what grove-autodiff keeps from the forward).
// Broadcast operands get their cotangent summed over the broadcast
// dimensions; masks (relu, max, min, reduce_max) are grove.step of a
// difference.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveArith.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::grove;

namespace {

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Builds the ops VJPs are made of: GroveArith's formulas and the shape
/// work cotangents need.
struct VJPBuilder : GroveArith {
  Value scale(Value x, double c) { return mul(x, scalar(x, c)); }
  Value neg(Value x) { return scale(x, -1.0); }
  /// 1 - step(x): 1 where x <= 0.
  Value notStep(Value x) { return sub(scalar(x, 1.0), step(x)); }

  /// `v` broadcast to the shape of `like` (numpy rules).
  Value broadcastLike(Value v, Value like) {
    RankedTensorType type = tensorOf(like);
    if (tensorOf(v).getShape() == type.getShape())
      return v;
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(dim(like, d));
    return BroadcastToOp::create(b, loc, v, type.getShape(), sizes);
  }

  /// `grad` (a broadcast of something of type `target`) summed back to
  /// `target`: over leading dimensions, and over those `target` has as 1.
  Value unbroadcast(Value grad, Type target) {
    auto to = cast<RankedTensorType>(target);
    RankedTensorType from = tensorOf(grad);
    int64_t lead = from.getRank() - to.getRank();
    if (lead > 0)
      grad = ReduceSumOp::create(b, loc, grad,
                                 llvm::to_vector(llvm::seq<int64_t>(0, lead)));
    from = tensorOf(grad);
    SmallVector<int64_t> ones;
    for (int64_t d = 0; d < to.getRank(); ++d)
      if (to.getDimSize(d) == 1 && from.getDimSize(d) != 1)
        ones.push_back(d);
    if (!ones.empty())
      grad = ReduceSumOp::create(b, loc, grad, ones, /*keepdims=*/true);
    // A static size the dynamic operand was checked against at run time.
    if (grad.getType() != target)
      grad = tensor::CastOp::create(b, loc, target, grad);
    return grad;
  }

  /// `v` of the shape `like` has with the sorted `axes` removed, with them
  /// put back as size 1 (a reduction's result as if with keepdims).
  Value insertUnitDims(Value v, Value like, ArrayRef<int64_t> axes) {
    RankedTensorType likeType = tensorOf(like);
    SmallVector<int64_t> shape(likeType.getShape());
    for (int64_t a : axes)
      shape[a] = 1;
    auto type = RankedTensorType::get(shape, likeType.getElementType());
    if (tensorOf(v).getRank() == 0 ||
        llvm::count_if(shape, ShapedType::isDynamic) <= 1)
      return ReshapeOp::create(b, loc, type, v);
    // Two dynamic sizes or more: expand_shape, with groups of each kept
    // dimension and the unit dimensions after it (leading ones join the
    // first group).
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < likeType.getRank(); ++d) {
      bool unit = llvm::is_contained(axes, d);
      if (!unit || groups.empty())
        groups.emplace_back();
      groups.back().push_back(d);
    }
    if (llvm::is_contained(axes, int64_t(0)) && groups.size() > 1 &&
        llvm::all_of(groups.front(),
                     [&](int64_t d) { return llvm::is_contained(axes, d); })) {
      ReassociationIndices lead = groups.front();
      groups.erase(groups.begin());
      groups.front().insert(groups.front().begin(), lead.begin(), lead.end());
    }
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < likeType.getRank(); ++d)
      sizes.push_back(shape[d] == ShapedType::kDynamic
                          ? OpFoldResult(dim(like, d))
                          : OpFoldResult(b.getIndexAttr(shape[d])));
    return tensor::ExpandShapeOp::create(b, loc, type, v, groups, sizes);
  }

  /// `v` with the shape of `like` (same element count, row-major).
  FailureOr<Value> reshapeLike(Operation *op, Value v, Value like) {
    RankedTensorType type = tensorOf(like);
    if (llvm::count_if(type.getShape(), ShapedType::isDynamic) > 1)
      return op->emitOpError("cannot be differentiated: its operand ")
             << type << " has more than one dynamic dimension";
    return ReshapeOp::create(b, loc, type, v).getResult();
  }
};

SmallVector<int64_t> normalizedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes)
    out.push_back(a < 0 ? a + rank : a);
  llvm::sort(out);
  return out;
}

/// The VJP of a binary elementwise op: per-operand cotangents of the
/// broadcast shape, summed back to each operand.
LogicalResult binaryVJP(OpBuilder &b, Operation *op, Value dLhs, Value dRhs,
                        SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, op->getLoc()};
  out.push_back(dLhs ? v.unbroadcast(dLhs, op->getOperand(0).getType())
                     : Value());
  out.push_back(dRhs ? v.unbroadcast(dRhs, op->getOperand(1).getType())
                     : Value());
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  return binaryVJP(b, *this, dy[0], dy[0], out);
}

LogicalResult SubOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  return binaryVJP(b, *this, dy[0], v.neg(dy[0]), out);
}

LogicalResult MulOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  return binaryVJP(b, *this, v.mul(dy[0], getRhs()), v.mul(dy[0], getLhs()),
                   out);
}

LogicalResult DivOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  // d(a/b)/db = -(a/b)/b.
  VJPBuilder v{b, getLoc()};
  Value dLhs = v.div(dy[0], getRhs());
  Value dRhs = v.neg(v.div(v.mul(dy[0], getResult()), getRhs()));
  return binaryVJP(b, *this, dLhs, dRhs, out);
}

LogicalResult MaxOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  // Ties go to the right operand.
  VJPBuilder v{b, getLoc()};
  Value diff = v.sub(getLhs(), getRhs());
  return binaryVJP(b, *this, v.mul(dy[0], v.step(diff)),
                   v.mul(dy[0], v.notStep(diff)), out);
}

LogicalResult MinOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  Value diff = v.sub(getRhs(), getLhs());
  return binaryVJP(b, *this, v.mul(dy[0], v.step(diff)),
                   v.mul(dy[0], v.notStep(diff)), out);
}

LogicalResult ReluOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                               ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  out.push_back(v.mul(dy[0], v.step(getInput())));
  return success();
}

LogicalResult SigmoidOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                  ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  Value y = getResult();
  out.push_back(v.mul(dy[0], v.mul(y, v.sub(v.scalar(y, 1.0), y))));
  return success();
}

LogicalResult TanhOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                               ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  Value y = getResult();
  out.push_back(v.mul(dy[0], v.sub(v.scalar(y, 1.0), v.mul(y, y))));
  return success();
}

LogicalResult ExpOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  out.push_back(v.mul(dy[0], getResult()));
  return success();
}

LogicalResult LogOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  out.push_back(v.div(dy[0], getInput()));
  return success();
}

LogicalResult SqrtOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                               ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  out.push_back(v.div(v.scale(dy[0], 0.5), getResult()));
  return success();
}

LogicalResult ConvertOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                  ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  out.push_back(ConvertOp::create(b, getLoc(), getInput().getType(), dy[0]));
  return success();
}

LogicalResult ErfOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  // 2/sqrt(pi) exp(-x^2).
  VJPBuilder v{b, getLoc()};
  Value x = getInput();
  Value g = v.scale(v.exp(v.neg(v.mul(x, x))), 2.0 / std::sqrt(M_PI));
  out.push_back(v.mul(dy[0], g));
  return success();
}

LogicalResult SinOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  out.push_back(v.mul(dy[0], CosOp::create(b, getLoc(), getInput())));
  return success();
}

LogicalResult CosOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  out.push_back(v.neg(v.mul(dy[0], SinOp::create(b, getLoc(), getInput()))));
  return success();
}

LogicalResult FloorOp::buildVJP(OpBuilder &, ArrayRef<Value>,
                                ArrayRef<bool> needed,
                                SmallVectorImpl<Value> &out) {
  // Piecewise constant: nothing flows back.
  out.push_back(Value());
  return success();
}

LogicalResult GeluOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                               ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
  // Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2 and
  // phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
  VJPBuilder v{b, getLoc()};
  Value x = getInput();
  Value cdf = v.scale(v.add(v.scalar(x, 1.0),
                            ErfOp::create(b, getLoc(), v.scale(x, M_SQRT1_2))),
                      0.5);
  Value pdf =
      v.scale(v.exp(v.scale(v.mul(x, x), -0.5)), 1.0 / std::sqrt(2.0 * M_PI));
  out.push_back(v.mul(dy[0], v.add(cdf, v.mul(x, pdf))));
  return success();
}

LogicalResult GeluTanhOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                   ArrayRef<bool> needed,
                                   SmallVectorImpl<Value> &out) {
  // With u = k (x + c x^3) and t = tanh(u): y = x (1 + t) / 2, so
  // dy/dx = (1 + t) / 2 + x (1 - t^2) k (1 + 3 c x^2) / 2.
  VJPBuilder v{b, getLoc()};
  Value x = getInput();
  const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
  Value x2 = v.mul(x, x);
  Value u = v.scale(v.mul(x, v.add(v.scalar(x, 1.0), v.scale(x2, c))), k);
  Value t = TanhOp::create(b, getLoc(), u);
  Value half = v.scale(v.add(v.scalar(x, 1.0), t), 0.5);
  Value sech2 = v.sub(v.scalar(x, 1.0), v.mul(t, t));
  Value du = v.scale(v.add(v.scalar(x, 1.0), v.scale(x2, 3.0 * c)), 0.5 * k);
  out.push_back(v.mul(dy[0], v.add(half, v.mul(x, v.mul(sech2, du)))));
  return success();
}

LogicalResult SelectOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                 ArrayRef<bool> needed,
                                 SmallVectorImpl<Value> &out) {
  // The cotangent goes where the value was chosen; the mask gets none.
  VJPBuilder v{b, getLoc()};
  Value zero = v.scalar(dy[0], 0.0);
  Value zeros = v.broadcastLike(zero, dy[0]);
  out.push_back(Value());
  out.push_back(SelectOp::create(b, getLoc(), getMask(), dy[0], zeros));
  out.push_back(SelectOp::create(b, getLoc(), getMask(), zeros, dy[0]));
  return success();
}

LogicalResult StepOp::buildVJP(OpBuilder &, ArrayRef<Value>,
                               ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
  // Zero almost everywhere: nothing flows back.
  out.push_back(Value());
  return success();
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                 ArrayRef<bool> needed,
                                 SmallVectorImpl<Value> &out) {
  // With a = op(lhs), c = op(rhs): da = dy c^T and dc = a^T dy, then
  // transposed back where the operand is stored transposed.
  Location loc = getLoc();
  Value lhs = getLhs(), rhs = getRhs(), g = dy[0];
  bool tl = getTransposeLhs(), tr = getTransposeRhs();
  int64_t lr = tensorOf(lhs).getRank(), rr = tensorOf(rhs).getRank();
  auto swapLast = [&](Value x) -> Value {
    int64_t r = tensorOf(x).getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
    std::swap(perm[r - 1], perm[r - 2]);
    return TransposeOp::create(b, loc, x, perm);
  };
  // Stored transposed, an operand's cotangent is the transposed product,
  // computed as such: (g c^T)^T = c g^T and (a^T g)^T = g^T a.
  if (!needed[0])
    out.push_back(Value());
  else if (!tl)
    out.push_back(MatmulOp::create(b, loc, g, rhs, false, !tr));
  else if (lr == rr)
    out.push_back(MatmulOp::create(b, loc, rhs, g, tr, true));
  else
    out.push_back(swapLast(MatmulOp::create(b, loc, g, rhs, false, !tr)));

  if (!needed[1]) {
    out.push_back(Value());
    return success();
  }

  if (lr == rr) {
    out.push_back(tr ? MatmulOp::create(b, loc, g, lhs, true, tl)
                     : MatmulOp::create(b, loc, lhs, g, !tl, false));
    return success();
  }
  // 3x2, a shared right operand: the sum over the batch, as one GEMM over
  // the batch and row dimensions folded together.
  // collapse_shape folds two dynamic sizes too (batch x sequence).
  Value a = tl ? swapLast(lhs) : lhs;
  auto fold = [&](Value x) -> Value {
    SmallVector<ReassociationIndices> groups = {{0, 1}, {2}};
    return tensor::CollapseShapeOp::create(b, loc, x, groups);
  };
  Value a2 = fold(a), g2 = fold(g);
  out.push_back(tr ? MatmulOp::create(b, loc, g2, a2, true, false)
                   : MatmulOp::create(b, loc, a2, g2, true, false));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisations and reductions
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                  ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  // y (dy - sum(dy y)).
  VJPBuilder v{b, getLoc()};
  Value y = getResult();
  int64_t rank = tensorOf(y).getRank();
  // The attribute's getter is unsigned; a negative axis counts from the end.
  int64_t axis = static_cast<int64_t>(getAxis());
  axis = axis < 0 ? axis + rank : axis;
  Value s = ReduceSumOp::create(b, getLoc(), v.mul(dy[0], y),
                                ArrayRef<int64_t>{axis}, /*keepdims=*/true);
  out.push_back(v.mul(y, v.sub(dy[0], s)));
  return success();
}

LogicalResult LogSoftmaxOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                     ArrayRef<bool> needed,
                                     SmallVectorImpl<Value> &out) {
  // dy - exp(y) sum(dy).
  VJPBuilder v{b, getLoc()};
  Value y = getResult();
  int64_t rank = tensorOf(y).getRank();
  // The attribute's getter is unsigned; a negative axis counts from the end.
  int64_t axis = static_cast<int64_t>(getAxis());
  axis = axis < 0 ? axis + rank : axis;
  Value s = ReduceSumOp::create(b, getLoc(), dy[0], ArrayRef<int64_t>{axis},
                                /*keepdims=*/true);
  out.push_back(v.sub(dy[0], v.mul(v.exp(y), s)));
  return success();
}

namespace {
/// dy with the reduced axes back as size 1, and those axes.
std::pair<Value, SmallVector<int64_t>> keptCotangent(VJPBuilder &v, Value input,
                                                     Value dy,
                                                     ArrayRef<int64_t> axes,
                                                     bool keepdims) {
  SmallVector<int64_t> sorted = normalizedAxes(axes, tensorOf(input).getRank());
  return {keepdims ? dy : v.insertUnitDims(dy, input, sorted), sorted};
}
} // namespace

LogicalResult ReduceSumOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  auto [kept, axes] =
      keptCotangent(v, getInput(), dy[0], getAxes(), getKeepdims());
  out.push_back(v.broadcastLike(kept, getInput()));
  return success();
}

LogicalResult ReduceMeanOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                     ArrayRef<bool> needed,
                                     SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  auto [kept, axes] =
      keptCotangent(v, getInput(), dy[0], getAxes(), getKeepdims());
  Value n = v.count(getInput(), axes);
  out.push_back(v.broadcastLike(v.div(kept, n), getInput()));
  return success();
}

LogicalResult ReduceMaxOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  auto [kept, axes] =
      keptCotangent(v, getInput(), dy[0], getAxes(), getKeepdims());
  Value max = getKeepdims() ? getResult()
                            : v.insertUnitDims(getResult(), getInput(), axes);
  // Every element equal to its maximum shares the cotangent evenly, as
  // torch.amax's backward does.
  Value isMax = v.notStep(v.sub(max, getInput()));
  Value ties = ReduceSumOp::create(b, getLoc(), isMax, axes, /*keepdims=*/true);
  out.push_back(v.mul(v.div(isMax, ties), kept));
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                  ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  FailureOr<Value> dx = v.reshapeLike(*this, dy[0], getInput());
  if (failed(dx))
    return failure();
  out.push_back(*dx);
  return success();
}

LogicalResult FlattenOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                  ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  // Expanding the flattened tail back takes the input's own sizes.
  Location loc = getLoc();
  RankedTensorType in = getInput().getType();
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0)
    axis += in.getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < axis; ++d)
    groups.push_back({d});
  groups.push_back(llvm::to_vector(llvm::seq<int64_t>(axis, in.getRank())));
  if (axis == in.getRank() || axis == 0) {
    VJPBuilder v{b, loc};
    FailureOr<Value> dx = v.reshapeLike(*this, dy[0], getInput());
    if (failed(dx))
      return failure();
    out.push_back(*dx);
    return success();
  }
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < in.getRank(); ++d)
    sizes.push_back(
        in.isDynamicDim(d)
            ? OpFoldResult(
                  tensor::DimOp::create(b, loc, getInput(), d).getResult())
            : OpFoldResult(b.getIndexAttr(in.getDimSize(d))));
  out.push_back(
      tensor::ExpandShapeOp::create(b, loc, in, dy[0], groups, sizes));
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  out.push_back(TransposeOp::create(b, getLoc(), dy[0], inverse));
  return success();
}

LogicalResult BroadcastToOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                      ArrayRef<bool> needed,
                                      SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  out.push_back(v.unbroadcast(dy[0], getInput().getType()));
  out.append(getDynamicSizes().size(), Value());
  return success();
}

LogicalResult ConcatOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                 ArrayRef<bool> needed,
                                 SmallVectorImpl<Value> &out) {
  // Each input's block of the cotangent, at the sum of the sizes before it
  // along the axis, with the input's own sizes (dynamic ones included).
  Location loc = getLoc();
  VJPBuilder v{b, loc};
  int64_t rank = getType().getRank();
  // The attribute's getter is unsigned; a negative axis counts from the end.
  int64_t axis = static_cast<int64_t>(getAxis());
  axis = axis < 0 ? axis + rank : axis;
  OpFoldResult offset = b.getIndexAttr(0);
  for (auto [input, want] : llvm::zip(getInputs(), needed)) {
    RankedTensorType in = cast<RankedTensorType>(input.getType());
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        strides(rank, b.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(in.isDynamicDim(d)
                          ? OpFoldResult(v.dim(input, d))
                          : OpFoldResult(b.getIndexAttr(in.getDimSize(d))));
    offsets[axis] = offset;
    out.push_back(want ? tensor::ExtractSliceOp::create(b, loc, in, dy[0],
                                                        offsets, sizes, strides)
                             .getResult()
                       : Value());
    std::optional<int64_t> o = getConstantIntValue(offset);
    std::optional<int64_t> n = getConstantIntValue(sizes[axis]);
    offset = o && n
                 ? OpFoldResult(b.getIndexAttr(*o + *n))
                 : OpFoldResult(arith::AddIOp::create(
                       b, loc, getValueOrCreateConstantIndexOp(b, loc, offset),
                       getValueOrCreateConstantIndexOp(b, loc, sizes[axis])));
  }
  return success();
}

LogicalResult SliceOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                ArrayRef<bool> needed,
                                SmallVectorImpl<Value> &out) {
  // The cotangent put back where the slice came from, zeros elsewhere.
  VJPBuilder v{b, getLoc()};
  Value input = getInput();
  Value zeros = v.broadcastLike(v.scalar(input, 0.0), input);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  RankedTensorType dt = tensorOf(dy[0]);
  for (int64_t d = 0; d < dt.getRank(); ++d) {
    offsets.push_back(b.getIndexAttr(getStarts()[d]));
    strides.push_back(b.getIndexAttr(getStrides()[d]));
    sizes.push_back(dt.isDynamicDim(d)
                        ? OpFoldResult(v.dim(dy[0], d))
                        : OpFoldResult(b.getIndexAttr(dt.getDimSize(d))));
  }
  out.push_back(tensor::InsertSliceOp::create(b, getLoc(), dy[0], zeros,
                                              offsets, sizes, strides));
  return success();
}

//===----------------------------------------------------------------------===//
// NN
//===----------------------------------------------------------------------===//

/// conv2d's input gradient: the stride-1 convolution of the output
/// gradient, dilated by the stride, with the flipped kernel, its filter
/// and channel roles swapped within each group.
static FailureOr<Value> convInputGrad(OpBuilder &b, Conv2DOp op, Value g) {
  Location loc = op.getLoc();
  VJPBuilder v{b, loc};
  Value w = op.getWeight();
  RankedTensorType xt = op.getInput().getType(), wt = tensorOf(w),
                   gt = tensorOf(g);
  ArrayRef<int64_t> s = op.getStrides(), p = op.getPadding(),
                    d = op.getDilations();
  int64_t groups = op.getGroupsAttr().getInt();
  int64_t f = wt.getDimSize(0), cg = wt.getDimSize(1);
  int64_t kh = wt.getDimSize(2), kw = wt.getDimSize(3);
  if (xt.isDynamicDim(2) || xt.isDynamicDim(3))
    return op.emitOpError("cannot be differentiated with respect to its "
                          "input: its spatial sizes are dynamic");
  int64_t k[2] = {kh, kw};
  SmallVector<int64_t> pad(4);
  for (int i = 0; i < 2; ++i) {
    int64_t span = d[i] * (k[i] - 1);
    int64_t rest = (xt.getDimSize(2 + i) + p[i] + p[2 + i] - span - 1) % s[i];
    pad[i] = span - p[i];
    pad[2 + i] = span - p[2 + i] + rest;
    if (pad[i] < 0 || pad[2 + i] < 0)
      return op.emitOpError("cannot be differentiated with respect to its "
                            "input: its padding exceeds the dilated kernel");
  }
  Value flipped;
  if (groups == 1) {
    flipped = TransposeOp::create(b, loc, w, ArrayRef<int64_t>{1, 0, 2, 3});
  } else {
    Value split = ReshapeOp::create(
        b, loc, w, ArrayRef<int64_t>{groups, f / groups, cg, kh, kw});
    Value swapped =
        TransposeOp::create(b, loc, split, ArrayRef<int64_t>{0, 2, 1, 3, 4});
    flipped = ReshapeOp::create(
        b, loc, swapped, ArrayRef<int64_t>{groups * cg, f / groups, kh, kw});
  }
  flipped = ReverseOp::create(b, loc, flipped, b.getDenseI64ArrayAttr({2, 3}));
  Value dilated = g;
  if (s[0] != 1 || s[1] != 1) {
    SmallVector<int64_t> shape = {gt.getDimSize(0), gt.getDimSize(1),
                                  (gt.getDimSize(2) - 1) * s[0] + 1,
                                  (gt.getDimSize(3) - 1) * s[1] + 1};
    SmallVector<Value> sizes;
    if (gt.isDynamicDim(0))
      sizes.push_back(v.dim(g, 0));
    Value zeros = BroadcastToOp::create(b, loc, v.scalar(g, 0.0), shape, sizes);
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)), extents;
    for (int64_t i = 0; i < 4; ++i)
      extents.push_back(gt.isDynamicDim(i)
                            ? OpFoldResult(v.dim(g, i))
                            : OpFoldResult(b.getIndexAttr(gt.getDimSize(i))));
    SmallVector<OpFoldResult> steps = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       b.getIndexAttr(s[0]),
                                       b.getIndexAttr(s[1])};
    dilated = tensor::InsertSliceOp::create(b, loc, g, zeros, offsets, extents,
                                            steps);
  }
  Value dx = Conv2DOp::create(b, loc, dilated, flipped, Value(),
                              ArrayRef<int64_t>{1, 1}, pad, d, groups);
  if (dx.getType() != xt)
    dx = tensor::CastOp::create(b, loc, xt, dx);
  return dx;
}

LogicalResult Conv2DOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                 ArrayRef<bool> needed,
                                 SmallVectorImpl<Value> &out) {
  // Input: convInputGrad, only where needed (an image input is not, and
  // may have sizes it cannot take). Weight: grove.conv2d_weight_grad. Bias:
  // the sum of the output gradient over all but the filters.
  Location loc = getLoc();
  Value g = dy[0];
  if (needed[0]) {
    FailureOr<Value> dx = convInputGrad(b, *this, g);
    if (failed(dx))
      return failure();
    out.push_back(*dx);
  } else {
    out.push_back(Value());
  }
  out.push_back(Conv2DWeightGradOp::create(
      b, loc, getWeight().getType(), getInput(), g, getStridesAttr(),
      getPaddingAttr(), getDilationsAttr(), getGroupsAttr()));
  if (getBias())
    out.push_back(ReduceSumOp::create(b, loc, g, ArrayRef<int64_t>{0, 2, 3}));
  return success();
}

LogicalResult MaxPool2DOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  // The winners are searched for again unless grove-expand-training-ops
  // finds this pool to take them from (max_pool2d_with_indices).
  out.push_back(MaxPool2DGradOp::create(
      b, getLoc(), getInput().getType(), getInput(), dy[0], Value(),
      getKernelAttr(), getStridesAttr(), getPaddingAttr(), getCeilModeAttr()));
  return success();
}

LogicalResult AvgPool2DOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  out.push_back(AvgPool2DGradOp::create(
      b, getLoc(), getInput().getType(), getInput(), dy[0], getKernelAttr(),
      getStridesAttr(), getPaddingAttr(), getCeilModeAttr(),
      getCountIncludePadAttr()));
  return success();
}

LogicalResult ReverseOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                  ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  out.push_back(ReverseOp::create(b, getLoc(), dy[0], getAxesAttr()));
  return success();
}

LogicalResult GlobalAvgPoolOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                        ArrayRef<bool> needed,
                                        SmallVectorImpl<Value> &out) {
  VJPBuilder v{b, getLoc()};
  Value x = getInput();
  Value n = v.count(x, {2, 3});
  out.push_back(v.broadcastLike(v.div(dy[0], n), x));
  return success();
}

LogicalResult BatchNormOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  // y = (x - mean) k + bias with k = scale / sqrt(var + eps), per channel.
  ChannelArith v(b, getLoc(), getInput());
  Value x = getInput(), g = dy[0];
  Value inv = v.inverseStd(getVariance(), getEpsilon().convertToDouble());
  Value k = v.mul(getScale(), inv);
  Value centered = v.sub(x, v.column(getMean()));
  Value sumDy = v.sumOthers(g);
  Value sumDyCentered = v.sumOthers(v.mul(g, centered));
  out.push_back(v.mul(g, v.column(k)));                     // input
  out.push_back(v.mul(sumDyCentered, inv));                 // scale
  out.push_back(sumDy);                                     // bias
  out.push_back(v.mul(v.mul(sumDy, k), v.scalar(x, -1.0))); // mean
  Value varCoef = v.mul(k, v.mul(inv, inv));
  out.push_back(v.mul(v.mul(sumDyCentered, varCoef), // variance
                      v.scalar(x, -0.5)));
  return success();
}

LogicalResult BatchNormTrainingOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                            ArrayRef<bool> needed,
                                            SmallVectorImpl<Value> &out) {
  // With x̂ = (x - μ_B) inv, inv = 1 / sqrt(σ²_B + eps), the statistics'
  // own gradients folded in: dx = scale inv (dy - mean(dy) - x̂ mean(dy
  // x̂)), the means over each channel's elements. The statistics are
  // recomputed (CSE merges them with the forward's).
  ChannelArith v(b, getLoc(), getInput());
  Value x = getInput(), g = dy[0];
  auto [mean, var] = v.batchStatistics(x);
  Value inv = v.inverseStd(var, getEpsilon().convertToDouble());
  Value xhat = v.mul(v.sub(x, v.column(mean)), v.column(inv));
  Value gxhat = v.mul(g, xhat);
  Value inner = v.sub(v.sub(g, v.column(v.meanOthers(g))),
                      v.mul(xhat, v.column(v.meanOthers(gxhat))));
  out.push_back(v.mul(inner, v.column(v.mul(getScale(), inv)))); // input
  out.push_back(v.sumOthers(gxhat));                             // scale
  out.push_back(v.sumOthers(g));                                 // bias
  return success();
}

LogicalResult LayerNormOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  // One fused op for all three (it recomputes each row's statistics).
  auto grad = LayerNormGradOp::create(
      b, getLoc(),
      TypeRange{getInput().getType(), getScale().getType(),
                getScale().getType()},
      dy[0], getInput(), getScale(), getEpsilonAttr());
  out.append({grad.getInputGrad(), grad.getScaleGrad(), grad.getBiasGrad()});
  return success();
}

/// The rows of `dy` (one per index in `ids`, rank 1) summed per index into
/// a tensor of type `target` (static rows): positions sorted by index, the
/// rows gathered in that order, each index's run added up. Indices outside
/// the target sort last, past every group, and are never summed.
static Value sumRowsByIndex(OpBuilder &b, Location loc, Value dy, Value ids,
                            RankedTensorType target) {
  int64_t rows = target.getDimSize(0);
  int64_t n = tensorOf(ids).getDimSize(0);
  Type i32 = b.getI32Type();
  auto group =
      GroupByIndexOp::create(b, loc,
                             TypeRange{RankedTensorType::get({n}, i32),
                                       RankedTensorType::get({rows + 1}, i32)},
                             ids, b.getI64IntegerAttr(rows));
  Value sorted = GatherOp::create(b, loc, dy, group.getOrder());
  Value sums = SegmentSumOp::create(b, loc, sorted, group.getOffsets());
  // One segment per row of the target: rows + 1 offsets.
  return tensor::CastOp::create(b, loc, target, sums);
}

LogicalResult EmbeddingOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  RankedTensorType table = getTable().getType();
  int64_t rows = table.getDimSize(0), width = table.getDimSize(1);
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(width) || rows < 1 ||
      rows >= int64_t(INT32_MAX))
    return emitOpError("differentiates only a table of static shape with 1 "
                       "to 2^31 - 2 rows, got ")
           << table;
  RankedTensorType idsType = getIds().getType();
  int64_t n = idsType.hasStaticShape() ? idsType.getNumElements()
                                       : ShapedType::kDynamic;
  Value ids = getIds();
  if (idsType.getRank() != 1)
    ids = ReshapeOp::create(b, loc, ids, ArrayRef<int64_t>{n});
  Value g = ReshapeOp::create(b, loc, dy[0], ArrayRef<int64_t>{n, width});
  out.push_back(sumRowsByIndex(b, loc, g, ids, table));
  out.push_back(Value());
  return success();
}

LogicalResult AttentionOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  // One fused op for query, key and value; the additive mask is treated as
  // a constant (a learned bias would need dS summed over its broadcast).
  if (getMask() && needed[3])
    return emitOpError("differentiates only with respect to query, key and "
                       "value, not the mask");
  auto grad = AttentionGradOp::create(
      b, getLoc(),
      TypeRange{getQuery().getType(), getKey().getType(), getValue().getType()},
      dy[0], getQuery(), getKey(), getValue(), getResult(), getMask(),
      getScaleAttr(), getCausalAttr(), getKeyTileAttr());
  out.append({grad.getQueryGrad(), grad.getKeyGrad(), grad.getValueGrad()});
  if (getMask())
    out.push_back(Value());
  return success();
}

LogicalResult DropoutOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                  ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  // Linear in x with a mask the same draw recomputes: dx = dropout(dy).
  out.push_back(DropoutOp::create(b, getLoc(), dy[0].getType(), dy[0],
                                  getRateAttr(), getStreamAttr(),
                                  getGeneratorAttr()));
  return success();
}

LogicalResult GatherOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                 ArrayRef<bool> needed,
                                 SmallVectorImpl<Value> &out) {
  RankedTensorType input = getInput().getType();
  if (input.isDynamicDim(0) || input.getDimSize(0) < 1 ||
      input.getDimSize(0) >= int64_t(INT32_MAX))
    return emitOpError("differentiates only an input with static rows, 1 to "
                       "2^31 - 2 of them, got ")
           << input;
  out.push_back(sumRowsByIndex(b, getLoc(), dy[0], getIndices(), input));
  out.push_back(Value());
  return success();
}

LogicalResult SplitAttentionOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                         ArrayRef<bool> needed,
                                         SmallVectorImpl<Value> &out) {
  // One fused op (it reads U once); the inner BN's statistics get their
  // gradients from bn_scale's: with n = (z - mean) k + beta, k = scale inv,
  // d mean = -k d beta and d var = -scale inv^2 d scale / 2.
  auto grad = SplitAttentionGradOp::create(b, getLoc(), dy[0], *this);
  VJPBuilder v{b, getLoc()};
  Value inv = v.div(
      v.scalar(getBnVariance(), 1.0),
      v.sqrt(v.add(getBnVariance(),
                   v.scalar(getBnVariance(), getEpsilon().convertToDouble()))));
  Value k = v.mul(getBnScale(), inv);
  Value dScale = grad.getBnScaleGrad(), dBias = grad.getBnBiasGrad();
  out.append({grad.getInputGrad(), grad.getFc1WeightGrad(),
              grad.getFc1BiasGrad(), dScale, dBias});
  out.push_back(needed[5] ? v.neg(v.mul(k, dBias)) : Value());
  out.push_back(needed[6] ? v.scale(v.mul(v.mul(k, inv), dScale), -0.5)
                          : Value());
  out.append({grad.getFc2WeightGrad(), grad.getFc2BiasGrad()});
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxCrossEntropyOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                              ArrayRef<bool> needed,
                                              SmallVectorImpl<Value> &out) {
  // (softmax(logits) - target) dy / N.
  Location loc = getLoc();
  VJPBuilder v{b, loc};
  Value logits = getLogits();
  RankedTensorType lt = getLogits().getType();
  Value target = OneHotOp::create(b, loc, lt, getLabels());
  double eps = getLabelSmoothing().convertToDouble();
  if (eps != 0.0)
    target = v.add(v.scale(target, 1.0 - eps),
                   v.scalar(logits, eps / double(lt.getDimSize(1))));
  // softmax as exp(log_softmax): the loss's expansion computes the same
  // log_softmax, so CSE leaves one row max and one row sum for both. Below
  // f32 the rounded log would cost p |log p| of precision.
  Value probs =
      lt.getElementType().getIntOrFloatBitWidth() >= 32
          ? v.exp(LogSoftmaxOp::create(b, loc, logits, b.getI64IntegerAttr(1)))
          : SoftmaxOp::create(b, loc, logits, b.getI64IntegerAttr(1));
  Value perRow = v.div(dy[0], v.count(logits, {0}));
  out.push_back(v.mul(v.sub(probs, target), perRow));
  out.push_back(Value());
  return success();
}

LogicalResult MSELossOp::buildVJP(OpBuilder &b, ArrayRef<Value> dy,
                                  ArrayRef<bool> needed,
                                  SmallVectorImpl<Value> &out) {
  // 2 (prediction - target) dy / count.
  VJPBuilder v{b, getLoc()};
  Value p = getPrediction();
  int64_t rank = getPrediction().getType().getRank();
  Value n = v.count(p, llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  Value d = v.mul(v.sub(p, getTarget()), v.div(v.scale(dy[0], 2.0), n));
  out.push_back(d);
  out.push_back(v.neg(d));
  return success();
}
