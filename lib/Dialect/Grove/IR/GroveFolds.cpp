//===- GroveFolds.cpp - Grove op folders
//-----------------------------------===//
//
// Only folds that are obviously profitable and shape-preserving: identities
// (reshape/transpose/slice/broadcast that change nothing, x+0, x*1), inverse
// pairs, and constant arithmetic on splats.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::grove;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// Whether `a` and `b` are one schedule: the same op, or two of the same
/// forest and attributes (before CSE merges them).
static bool isSameSchedule(TreeScheduleOp a, TreeScheduleOp b) {
  return a && b &&
         (a == b || (a->getOperands() == b->getOperands() &&
                     a->getAttrDictionary() == b->getAttrDictionary()));
}

OpFoldResult GatherOp::fold(FoldAdaptor) {
  // gather(gather(x, position), order) = x: order[i] is the node at
  // position i and position[node] its position, so the two compose to the
  // identity on x's rows.
  auto inner = getInput().getDefiningOp<GatherOp>();
  if (!inner || inner.getInput().getType() != getType())
    return {};
  auto order = dyn_cast<OpResult>(getIndices());
  auto position = dyn_cast<OpResult>(inner.getIndices());
  if (!order || !position)
    return {};
  auto outer = dyn_cast<TreeScheduleOp>(order.getOwner());
  auto first = dyn_cast<TreeScheduleOp>(position.getOwner());
  if (!isSameSchedule(outer, first) || order != outer.getOrder() ||
      position != first.getPosition())
    return {};
  return inner.getInput();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  // At most one result dimension is dynamic and the element count is kept,
  // so equal types mean equal shapes.
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) -> reshape(x): row-major order is unchanged.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    if (inner.getInput().getType() == getType() && getType().hasStaticShape())
      return inner.getInput();
    // Only when the combined reshape verifies: a static input needs a
    // count the result's static dimensions divide; a dynamic input needs a
    // dynamic result.
    RankedTensorType in = inner.getInput().getType();
    int64_t outStatic = getStaticProduct(getType().getShape());
    int64_t midStatic = getStaticProduct(inner.getType().getShape());
    bool valid =
        in.hasStaticShape()
            ? getType().hasStaticShape() ||
                  (outStatic != 0 && in.getNumElements() % outStatic == 0)
            : !getType().hasStaticShape();
    // The inner reshape's run-time divisibility check must be implied by
    // the outer one's, or folding would drop it.
    if (!inner.getType().hasStaticShape() && !in.hasStaticShape())
      valid &= midStatic != 0 && outStatic % midStatic == 0;
    if (valid) {
      getInputMutable().assign(inner.getInput());
      return getResult();
    }
  }
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return dense.reshape(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  // transpose(transpose(x, p), q)[i] = x[p[q[i]]].
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t q : perm)
      composed.push_back(innerPerm[q]);
    getInputMutable().assign(inner.getInput());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getInput().getType() != getType())
    return {};
  bool identity = llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
                  llvm::all_of(getStrides(), [](int64_t s) { return s == 1; });
  for (auto [d, limit] : llvm::enumerate(getLimits()))
    identity &= limit == -1 || limit == getType().getDimSize(d);
  return identity ? getInput() : OpFoldResult();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() && getType().hasStaticShape())
    return getInput();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return SplatElementsAttr::get(getType(),
                                    splat.getSplatValue<Attribute>());
  return {};
}

/// True when `attr` is a float splat bitwise equal to `value` (so -0.0 and
/// +0.0 differ).
static bool isSplatOf(Attribute attr, double value) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return false;
  return splat.getSplatValue<APFloat>().isExactlyValue(value);
}

/// Folds a binary op whose operands are both splats of the result type.
template <typename Fn>
static Attribute foldSplats(Type resultType, Attribute lhs, Attribute rhs,
                            Fn &&fn) {
  auto l = dyn_cast_if_present<SplatElementsAttr>(lhs);
  auto r = dyn_cast_if_present<SplatElementsAttr>(rhs);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!l || !r || !type || !type.hasStaticShape())
    return {};
  APFloat v = fn(l.getSplatValue<APFloat>(), r.getSplatValue<APFloat>());
  return SplatElementsAttr::get(type, v);
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + -0.0 is x for every x; x + +0.0 is not (-0.0 + +0.0 = +0.0).
  if (isSplatOf(adaptor.getRhs(), -0.0) && getLhs().getType() == getType())
    return getLhs();
  return foldSplats(getType(), adaptor.getLhs(), adaptor.getRhs(),
                    [](APFloat a, const APFloat &b) {
                      a.add(b, APFloat::rmNearestTiesToEven);
                      return a;
                    });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0.0) && getLhs().getType() == getType())
    return getLhs();
  return foldSplats(getType(), adaptor.getLhs(), adaptor.getRhs(),
                    [](APFloat a, const APFloat &b) {
                      a.subtract(b, APFloat::rmNearestTiesToEven);
                      return a;
                    });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  return foldSplats(getType(), adaptor.getLhs(), adaptor.getRhs(),
                    [](APFloat a, const APFloat &b) {
                      a.multiply(b, APFloat::rmNearestTiesToEven);
                      return a;
                    });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  return foldSplats(getType(), adaptor.getLhs(), adaptor.getRhs(),
                    [](APFloat a, const APFloat &b) {
                      a.divide(b, APFloat::rmNearestTiesToEven);
                      return a;
                    });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldSplats(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APFloat &a, const APFloat &b) { return llvm::maximum(a, b); });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldSplats(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APFloat &a, const APFloat &b) { return llvm::minimum(a, b); });
}

/// Reducing over no axes is the identity.
template <typename ReduceOp> static OpFoldResult foldEmptyReduce(ReduceOp op) {
  if (op.getAxes().empty() && op.getInput().getType() == op.getType())
    return op.getInput();
  return {};
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor) { return foldEmptyReduce(*this); }
OpFoldResult ReduceMeanOp::fold(FoldAdaptor) { return foldEmptyReduce(*this); }
OpFoldResult ReduceMaxOp::fold(FoldAdaptor) { return foldEmptyReduce(*this); }

OpFoldResult AgreeDimsOp::fold(FoldAdaptor adaptor) {
  // Provably equal sizes need no check.
  if (getLhs() == getRhs())
    return getLhs();
  auto l = dyn_cast_if_present<IntegerAttr>(adaptor.getLhs());
  auto r = dyn_cast_if_present<IntegerAttr>(adaptor.getRhs());
  if (l && r && l.getValue() == r.getValue())
    return l;
  return {};
}
