//===- GroveTypeInference.cpp - Result types from operands ----------------===//
//
// What a grove op's result type is, given its operands and attributes, for
// its type-inferring builders: a pass (autodiff, fusion, a lowering that
// builds grove ops) writes `MatmulOp::create(b, loc, x, w, false, true)`
// without spelling the type. The rules are the verifiers' (GroveOps.cpp,
// GroveNNOps.cpp); where they reject the operands, the first operand's type
// is returned so that the verifier reports the problem.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

using namespace mlir;
using namespace mlir::grove;

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static RankedTensorType withShape(Value like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, tensorOf(like).getElementType());
}

RankedTensorType mlir::grove::inferBroadcastType(Value lhs, Value rhs) {
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(tensorOf(lhs).getShape(), tensorOf(rhs).getShape());
  return failed(shape) ? tensorOf(lhs) : withShape(lhs, *shape);
}

RankedTensorType mlir::grove::inferMatmulType(Value lhs, Value rhs,
                                              bool transposeLhs,
                                              bool transposeRhs) {
  RankedTensorType lt = tensorOf(lhs), rt = tensorOf(rhs);
  int64_t lr = lt.getRank(), rr = rt.getRank();
  if (lr < 2 || rr < 2)
    return lt;
  SmallVector<int64_t> shape;
  if (lr == 3)
    shape.push_back(lt.getDimSize(0));
  shape.push_back(lt.getDimSize(lr - (transposeLhs ? 1 : 2)));
  shape.push_back(rt.getDimSize(rr - (transposeRhs ? 2 : 1)));
  return withShape(lhs, shape);
}

RankedTensorType mlir::grove::inferReduceType(Value input,
                                              ArrayRef<int64_t> axes,
                                              bool keepdims) {
  RankedTensorType in = tensorOf(input);
  llvm::SmallVector<bool> reduced(in.getRank(), false);
  for (int64_t a : axes) {
    FailureOr<int64_t> n = normalizeAxis(a, in.getRank());
    if (failed(n))
      return in;
    reduced[*n] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (!reduced[d])
      shape.push_back(in.getDimSize(d));
    else if (keepdims)
      shape.push_back(1);
  return withShape(input, shape);
}

RankedTensorType mlir::grove::inferTransposeType(Value input,
                                                 ArrayRef<int64_t> perm) {
  RankedTensorType in = tensorOf(input);
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return in;
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank())
      return in;
    shape.push_back(in.getDimSize(p));
  }
  return withShape(input, shape);
}

RankedTensorType mlir::grove::inferConcatType(ValueRange inputs, int64_t axis) {
  RankedTensorType first = tensorOf(inputs.front());
  if (axis < 0 || axis >= first.getRank())
    return first;
  SmallVector<int64_t> shape(first.getShape());
  int64_t total = 0;
  for (Value v : inputs) {
    RankedTensorType t = tensorOf(v);
    if (t.getRank() != first.getRank())
      return first;
    int64_t d = t.getDimSize(axis);
    total = ShapedType::isDynamic(d) || ShapedType::isDynamic(total)
                ? ShapedType::kDynamic
                : total + d;
  }
  shape[axis] = total;
  return withShape(inputs.front(), shape);
}

RankedTensorType mlir::grove::inferWindowedType(Value input, int64_t channels,
                                                ArrayRef<int64_t> window,
                                                ArrayRef<int64_t> strides,
                                                ArrayRef<int64_t> padding,
                                                bool ceilMode) {
  RankedTensorType in = tensorOf(input);
  if (in.getRank() != 4 || window.size() != 2 || strides.size() != 2 ||
      padding.size() != 4)
    return in;
  SmallVector<int64_t> shape = {in.getDimSize(0), channels, 0, 0};
  for (int i = 0; i < 2; ++i) {
    int64_t size =
        getWindowedOutputSize(in.getDimSize(2 + i), padding[i], padding[2 + i],
                              window[i], strides[i], ceilMode);
    if (size == -1)
      return in;
    shape[2 + i] = size;
  }
  return withShape(input, shape);
}

RankedTensorType mlir::grove::inferConv2DType(Value input, Value weight,
                                              ArrayRef<int64_t> strides,
                                              ArrayRef<int64_t> padding,
                                              ArrayRef<int64_t> dilations) {
  RankedTensorType w = tensorOf(weight);
  if (w.getRank() != 4 || dilations.size() != 2)
    return tensorOf(input);
  // A dilated kernel spans d·(k - 1) + 1 input elements.
  SmallVector<int64_t> span = {dilations[0] * (w.getDimSize(2) - 1) + 1,
                               dilations[1] * (w.getDimSize(3) - 1) + 1};
  return inferWindowedType(input, w.getDimSize(0), span, strides, padding,
                           /*ceilMode=*/false);
}

RankedTensorType mlir::grove::inferGlobalAvgPoolType(Value input) {
  RankedTensorType in = tensorOf(input);
  if (in.getRank() != 4)
    return in;
  return withShape(input, {in.getDimSize(0), in.getDimSize(1), 1, 1});
}

RankedTensorType mlir::grove::inferFlattenType(Value input, int64_t axis) {
  RankedTensorType in = tensorOf(input);
  FailureOr<int64_t> a = normalizeAxis(axis, in.getRank());
  if (failed(a))
    return in;
  SmallVector<int64_t> shape(in.getShape().take_front(*a));
  ArrayRef<int64_t> tail = in.getShape().drop_front(*a);
  shape.push_back(llvm::any_of(tail, ShapedType::isDynamic)
                      ? ShapedType::kDynamic
                      : getStaticProduct(tail));
  return withShape(input, shape);
}

int64_t mlir::grove::poolChannels(Value input) {
  RankedTensorType in = tensorOf(input);
  return in.getRank() >= 2 ? in.getDimSize(1) : ShapedType::kDynamic;
}

RankedTensorType mlir::grove::inferSliceType(Value input,
                                             ArrayRef<int64_t> starts,
                                             ArrayRef<int64_t> limits,
                                             ArrayRef<int64_t> strides) {
  RankedTensorType in = tensorOf(input);
  int64_t rank = in.getRank();
  if (static_cast<int64_t>(starts.size()) != rank ||
      static_cast<int64_t>(limits.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return in;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = in.getDimSize(d), start = starts[d], limit = limits[d];
    if (strides[d] < 1)
      return in;
    if (limit == -1 && ShapedType::isDynamic(dim)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t end = limit == -1 ? dim : limit;
    shape.push_back(end <= start ? 0 : (end - start - 1) / strides[d] + 1);
  }
  return withShape(input, shape);
}

RankedTensorType mlir::grove::inferSplitAttentionType(Value input,
                                                      int64_t radix) {
  RankedTensorType in = tensorOf(input);
  if (in.getRank() != 4 || radix < 1 || in.isDynamicDim(1) ||
      in.getDimSize(1) % radix != 0)
    return in;
  SmallVector<int64_t> shape(in.getShape());
  shape[1] /= radix;
  return withShape(input, shape);
}
