//===- GroveNNOps.cpp - Verifiers of convolution, norm and pooling ops ----===//
//
// Static sizes are checked against the output-size formulas of the op
// descriptions (GroveNNOps.td); a dynamic input size must give a dynamic
// result size. The lowerings (lib/Conversion/GroveToLinalg/Convolution.cpp)
// rely on these rules.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

/// `name` has `size` entries, each at least `min`.
LogicalResult checkArray(Operation *op, StringRef name, ArrayRef<int64_t> v,
                         size_t size, int64_t min) {
  if (v.size() != size)
    return op->emitOpError("expects ")
           << name << " to have " << size << " entries, got " << v.size();
  for (int64_t x : v)
    if (x < min)
      return op->emitOpError("expects ")
             << name << " entries >= " << min << ", got " << x;
  return success();
}

LogicalResult checkRank(Operation *op, StringRef what, Type type,
                        int64_t rank) {
  if (cast<RankedTensorType>(type).getRank() != rank)
    return op->emitOpError() << what << " must have rank " << rank << ", got "
                             << cast<RankedTensorType>(type).getRank();
  return success();
}

LogicalResult checkSameElementType(Operation *op) {
  Type element;
  for (Type t :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    Type e = cast<ShapedType>(t).getElementType();
    if (element && e != element)
      return op->emitOpError("expects one element type, got ")
             << element << " and " << e;
    element = e;
  }
  return success();
}

/// A result size against the size the formula gives (dynamic when the input
/// size is).
LogicalResult checkSize(Operation *op, StringRef what, int64_t expected,
                        int64_t actual) {
  if (ShapedType::isDynamic(expected) != ShapedType::isDynamic(actual) ||
      (!ShapedType::isDynamic(expected) && expected != actual)) {
    InFlightDiagnostic d = op->emitOpError("expects ") << what << " ";
    if (ShapedType::isDynamic(expected))
      d << "to be dynamic like the input's";
    else
      d << expected;
    d << ", got ";
    if (ShapedType::isDynamic(actual))
      d << "?";
    else
      d << actual;
    return d;
  }
  return success();
}

} // namespace

int64_t mlir::grove::getWindowedOutputSize(int64_t in, int64_t padBefore,
                                           int64_t padAfter, int64_t window,
                                           int64_t stride, bool ceilMode) {
  if (ShapedType::isDynamic(in))
    return ShapedType::kDynamic;
  // Attributes are user input: overflow is an error, not wrap-around.
  std::optional<int64_t> padded = llvm::checkedAdd(in, padBefore);
  if (padded)
    padded = llvm::checkedAdd(*padded, padAfter);
  if (!padded)
    return -1;
  int64_t span = *padded - window;
  // PyTorch: ceil mode lets a window overhang the end by less than a
  // stride, even the first one.
  if (ceilMode) {
    std::optional<int64_t> overhang = llvm::checkedAdd(span, stride - 1);
    if (!overhang)
      return -1;
    span = *overhang;
  }
  if (span < 0)
    return -1;
  int64_t out = span / stride + 1;
  // PyTorch: a ceil-mode window must start inside the input or the leading
  // padding.
  if (ceilMode && (out - 1) * stride >= in + padBefore)
    --out;
  return out;
}

LogicalResult Conv2DOp::verify() {
  Operation *op = getOperation();
  if (failed(checkRank(op, "input", getInput().getType(), 4)) ||
      failed(checkRank(op, "weight", getWeight().getType(), 4)) ||
      failed(checkRank(op, "result", getType(), 4)) ||
      (getBias() && failed(checkRank(op, "bias", getBias().getType(), 1))) ||
      failed(checkSameElementType(op)) ||
      failed(checkArray(op, "strides", getStrides(), 2, 1)) ||
      failed(checkArray(op, "dilations", getDilations(), 2, 1)) ||
      failed(checkArray(op, "padding", getPadding(), 4, 0)))
    return failure();
  int64_t groups = getGroupsAttr().getInt();
  if (groups < 1)
    return emitOpError("expects groups >= 1, got ") << groups;
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> w = getWeight().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  if (llvm::any_of(w, ShapedType::isDynamic))
    return emitOpError("expects a static weight shape");
  if (llvm::any_of(w, [](int64_t d) { return d == 0; }))
    return emitOpError("expects a weight with no zero-size dimension");
  if (w[0] % groups != 0)
    return emitOpError("expects output channels (")
           << w[0] << ") divisible by groups (" << groups << ")";
  if (ShapedType::isDynamic(in[1]))
    return emitOpError("expects static input channels");
  std::optional<int64_t> perGroupTotal = llvm::checkedMul(w[1], groups);
  if (!perGroupTotal || in[1] != *perGroupTotal)
    return emitOpError("expects input channels (")
           << in[1] << ") = weight channels per group (" << w[1]
           << ") x groups (" << groups << ")";
  if (getBias() && getBias().getType().getDimSize(0) != w[0])
    return emitOpError("expects a static bias of ")
           << w[0] << " elements, got " << getBias().getType();
  if (failed(checkSize(op, "result batch", in[0], out[0])) ||
      failed(checkSize(op, "result channels", w[0], out[1])))
    return failure();
  ArrayRef<int64_t> s = getStrides(), d = getDilations(), p = getPadding();
  for (int i = 0; i < 2; ++i) {
    std::optional<int64_t> span = llvm::checkedMul(d[i], w[2 + i] - 1);
    if (!span || *span == INT64_MAX)
      return emitOpError("dilation ") << d[i] << " is too large";
    int64_t window = *span + 1;
    // Sizes are computed in 64 bits, at run time too (dynamic inputs).
    std::optional<int64_t> padding = llvm::checkedAdd(p[i], p[2 + i]);
    std::optional<int64_t> reach =
        padding ? llvm::checkedAdd(*padding, window) : std::nullopt;
    std::optional<int64_t> padded = padding && !ShapedType::isDynamic(in[2 + i])
                                        ? llvm::checkedAdd(in[2 + i], *padding)
                                        : std::nullopt;
    if (!reach || (!ShapedType::isDynamic(in[2 + i]) && !padded))
      return emitOpError("padding (")
             << p[i] << ", " << p[2 + i] << ") along dimension " << 2 + i
             << " overflows 64-bit sizes";
    int64_t expected =
        getWindowedOutputSize(in[2 + i], p[i], p[2 + i], window, s[i], false);
    if (expected == -1 || expected == 0)
      return emitOpError("dilated kernel (")
             << window << ") is larger than the padded input (" << *padded
             << ") along dimension " << 2 + i;
    if (failed(checkSize(op, i == 0 ? "result height" : "result width",
                         expected, out[2 + i])))
      return failure();
  }
  return success();
}

LogicalResult Conv2DWeightGradOp::verify() {
  Operation *op = getOperation();
  if (failed(checkRank(op, "input", getInput().getType(), 4)) ||
      failed(checkRank(op, "output_grad", getOutputGrad().getType(), 4)) ||
      failed(checkRank(op, "result", getType(), 4)) ||
      failed(checkSameElementType(op)) ||
      failed(checkArray(op, "strides", getStrides(), 2, 1)) ||
      failed(checkArray(op, "dilations", getDilations(), 2, 1)) ||
      failed(checkArray(op, "padding", getPadding(), 4, 0)))
    return failure();
  RankedTensorType x = getInput().getType(), dy = getOutputGrad().getType(),
                   w = getType();
  int64_t groups = getGroupsAttr().getInt();
  if (!w.hasStaticShape())
    return emitOpError("expects a static result (the weight's type)");
  if (groups < 1 || w.getDimSize(0) % groups != 0)
    return emitOpError("expects groups >= 1 dividing the filters, got ")
           << groups;
  if (x.isDynamicDim(1) || x.getDimSize(1) != w.getDimSize(1) * groups)
    return emitOpError("expects input channels = groups x ") << w.getDimSize(1);
  if (dy.isDynamicDim(1) || dy.getDimSize(1) != w.getDimSize(0))
    return emitOpError("expects output_grad channels = ") << w.getDimSize(0);
  for (int d = 0; d < 2; ++d) {
    int64_t expected = getWindowedOutputSize(
        x.getDimSize(2 + d), getPadding()[d], getPadding()[2 + d],
        getDilations()[d] * (w.getDimSize(2 + d) - 1) + 1, getStrides()[d],
        /*ceilMode=*/false);
    if (failed(checkSize(op, d ? "output_grad width" : "output_grad height",
                         expected, dy.getDimSize(2 + d))))
      return failure();
  }
  return success();
}

/// Both batch norms: an N x C x ... input with static channels, the result
/// of its type, per-channel `vectors` (named in `what`) of shape [C].
static LogicalResult verifyNormalization(Operation *op, ValueRange vectors,
                                         StringRef what, double epsilon) {
  if (failed(checkSameElementType(op)))
    return failure();
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  if (in.getRank() < 2)
    return op->emitOpError(
               "expects an input of rank >= 2 (N, C, ...), got rank ")
           << in.getRank();
  if (op->getResult(0).getType() != in)
    return op->emitOpError("expects the result type to equal the input type");
  if (in.isDynamicDim(1))
    return op->emitOpError("expects static channels");
  for (Value v : vectors) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != in.getDimSize(1))
      return op->emitOpError("expects ")
             << what << " of shape [" << in.getDimSize(1) << "], got " << t;
  }
  if (!(epsilon >= 0))
    return op->emitOpError("expects epsilon >= 0");
  return success();
}

LogicalResult BatchNormOp::verify() {
  return verifyNormalization(
      *this, {getScale(), getBias(), getMean(), getVariance()},
      "scale, bias, mean and variance", getEpsilon().convertToDouble());
}

LogicalResult BatchNormTrainingOp::verify() {
  if (failed(verifyNormalization(*this, {getScale(), getBias()},
                                 "scale and bias",
                                 getEpsilon().convertToDouble())))
    return failure();
  RankedTensorType in = getInput().getType();
  // One element per channel has no unbiased variance (torch refuses it).
  int64_t perChannel = 1;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != 1)
      perChannel = in.isDynamicDim(d) ? 0 : perChannel * in.getDimSize(d);
  if (perChannel == 1)
    return emitOpError("expects more than one value per channel");
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError("expects momentum in [0, 1]");
  return success();
}

LogicalResult
BatchNormTrainingOp::verifySymbolUses(SymbolTableCollection &table) {
  auto expected = cast<RankedTensorType>(getScale().getType());
  for (FlatSymbolRefAttr ref : {getRunningMeanAttr(), getRunningVarAttr()}) {
    auto param = table.lookupNearestSymbolFrom<ParamOp>(*this, ref);
    if (!param)
      return emitOpError("updates ") << ref << ", which is not a grove.param";
    if (param.getTensorType() != expected)
      return emitOpError("updates ")
             << ref << " of type " << param.getTensorType() << ", expected "
             << expected;
  }
  return success();
}

/// Shared by the 2-D pools and their gradients.
static LogicalResult verifyPool(Operation *op, Value input, Type result,
                                ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> padding, bool ceilMode) {
  if (failed(checkRank(op, "input", input.getType(), 4)) ||
      failed(checkRank(op, "result", result, 4)))
    return failure();
  Type inElt = cast<ShapedType>(input.getType()).getElementType();
  Type outElt = cast<ShapedType>(result).getElementType();
  if (inElt != outElt)
    return op->emitOpError("expects one element type, got ")
           << inElt << " and " << outElt;
  if (failed(checkArray(op, "kernel", kernel, 2, 1)) ||
      failed(checkArray(op, "strides", strides, 2, 1)) ||
      failed(checkArray(op, "padding", padding, 4, 0)))
    return failure();
  for (int i = 0; i < 4; ++i)
    if (padding[i] > kernel[i % 2] / 2)
      return op->emitOpError("expects padding at most half the kernel, got ")
             << padding[i] << " for a kernel of " << kernel[i % 2];
  ArrayRef<int64_t> in = cast<RankedTensorType>(input.getType()).getShape();
  ArrayRef<int64_t> out = cast<RankedTensorType>(result).getShape();
  if (failed(checkSize(op, "result batch", in[0], out[0])) ||
      failed(checkSize(op, "result channels", in[1], out[1])))
    return failure();
  for (int i = 0; i < 2; ++i) {
    int64_t expected = getWindowedOutputSize(
        in[2 + i], padding[i], padding[2 + i], kernel[i], strides[i], ceilMode);
    if (expected == -1 || expected == 0)
      return op->emitOpError("kernel (")
             << kernel[i] << ") is larger than the padded input along "
             << "dimension " << 2 + i;
    if (failed(checkSize(op, i == 0 ? "result height" : "result width",
                         expected, out[2 + i])))
      return failure();
  }
  return success();
}

LogicalResult MaxPool2DOp::verify() {
  return verifyPool(getOperation(), getInput(), getType(), getKernel(),
                    getStrides(), getPadding(), getCeilMode());
}

/// Winners (`indices`) have the pooled result's shape, as i32.
static LogicalResult checkIndicesShape(Operation *op, Value indices,
                                       Type pooled) {
  auto idx = cast<RankedTensorType>(indices.getType());
  auto out = cast<RankedTensorType>(pooled);
  if (idx.getRank() != out.getRank())
    return op->emitOpError("expects indices of rank ")
           << out.getRank() << ", got " << idx.getRank();
  for (int64_t d = 0; d < out.getRank(); ++d)
    if (failed(checkSize(op, "indices dimension", out.getDimSize(d),
                         idx.getDimSize(d))))
      return failure();
  return success();
}

LogicalResult MaxPool2DWithIndicesOp::verify() {
  if (failed(verifyPool(getOperation(), getInput(), getResult().getType(),
                        getKernel(), getStrides(), getPadding(),
                        getCeilMode())))
    return failure();
  return checkIndicesShape(getOperation(), getIndices(), getResult().getType());
}

LogicalResult AvgPool2DOp::verify() {
  return verifyPool(getOperation(), getInput(), getType(), getKernel(),
                    getStrides(), getPadding(), getCeilMode());
}

static LogicalResult verifyPoolGrad(Operation *op, Value input,
                                    Value outputGrad, Type result,
                                    ArrayRef<int64_t> kernel,
                                    ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> padding, bool ceilMode) {
  if (result != input.getType())
    return op->emitOpError("expects a result of the input's type");
  // The output gradient has the pool's result shape.
  return verifyPool(op, input, outputGrad.getType(), kernel, strides, padding,
                    ceilMode);
}

LogicalResult MaxPool2DGradOp::verify() {
  if (failed(verifyPoolGrad(*this, getInput(), getOutputGrad(), getType(),
                            getKernel(), getStrides(), getPadding(),
                            getCeilMode())))
    return failure();
  return getIndices()
             ? checkIndicesShape(*this, getIndices(), getOutputGrad().getType())
             : success();
}

LogicalResult AvgPool2DGradOp::verify() {
  return verifyPoolGrad(*this, getInput(), getOutputGrad(), getType(),
                        getKernel(), getStrides(), getPadding(), getCeilMode());
}

LogicalResult GlobalAvgPoolOp::verify() {
  Operation *op = getOperation();
  if (failed(checkRank(op, "input", getInput().getType(), 4)) ||
      failed(checkRank(op, "result", getType(), 4)) ||
      failed(checkSameElementType(op)))
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  if (failed(checkSize(op, "result batch", in[0], out[0])) ||
      failed(checkSize(op, "result channels", in[1], out[1])))
    return failure();
  if (out[2] != 1 || out[3] != 1)
    return emitOpError("expects a result of shape N x C x 1 x 1");
  return success();
}

LogicalResult FlattenOp::verify() {
  RankedTensorType in = getInput().getType();
  RankedTensorType out = getType();
  FailureOr<int64_t> axis = normalizeAxis(getAxisAttr().getInt(), in.getRank());
  if (failed(axis))
    return emitOpError("axis ") << getAxisAttr().getInt()
                                << " is out of range for rank " << in.getRank();
  if (in.getElementType() != out.getElementType())
    return emitOpError("expects the input's element type");
  if (out.getRank() != *axis + 1)
    return emitOpError("expects a result of rank ")
           << *axis + 1 << ", got " << out.getRank();
  ArrayRef<int64_t> tail = in.getShape().drop_front(*axis);
  if (llvm::count_if(tail, ShapedType::isDynamic) > 1)
    return emitOpError("cannot collapse more than one dynamic dimension");
  auto text = [](int64_t d) {
    return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
  };
  for (int64_t i = 0; i < *axis; ++i)
    if (in.getDimSize(i) != out.getDimSize(i))
      return emitOpError("expects result dimension ")
             << i << " to be " << text(in.getDimSize(i)) << ", got "
             << text(out.getDimSize(i));
  int64_t collapsed = llvm::any_of(tail, ShapedType::isDynamic)
                          ? ShapedType::kDynamic
                          : getStaticProduct(tail);
  return checkSize(getOperation(), "the collapsed dimension", collapsed,
                   out.getDimSize(*axis));
}

int64_t SplitAttentionOp::getChannels() {
  return getInput().getType().getDimSize(1) / getRadixAttr().getInt();
}

int64_t SplitAttentionOp::getInterChannels() {
  return getFc1Weight().getType().getDimSize(0);
}

int64_t SplitAttentionGradOp::getChannels() {
  return getInput().getType().getDimSize(1) / getRadixAttr().getInt();
}

int64_t SplitAttentionGradOp::getInterChannels() {
  return getFc1Weight().getType().getDimSize(0);
}

/// The checks split_attention and its gradient share: the attributes, U and
/// the attention's weights; `output` is the type of y (the forward's result,
/// the gradient's result_grad), named `outputName`.
template <typename OpT>
static LogicalResult verifySplitAttention(OpT op, RankedTensorType output,
                                          StringRef outputName) {
  Operation *o = op.getOperation();
  if (failed(checkRank(o, "input", op.getInput().getType(), 4)) ||
      failed(checkRank(o, outputName, output, 4)) ||
      failed(checkSameElementType(o)))
    return failure();
  int64_t r = op.getRadixAttr().getInt(), k = op.getCardinalityAttr().getInt();
  if (r < 1 || k < 1)
    return op.emitOpError("expects radix and cardinality >= 1, got ")
           << r << " and " << k;
  if (r > kMaxSplitAttentionRadix)
    return op.emitOpError("expects radix <= ")
           << kMaxSplitAttentionRadix << ", got " << r;
  ArrayRef<int64_t> in = op.getInput().getType().getShape();
  if (ShapedType::isDynamic(in[1]) || in[1] % r != 0)
    return op.emitOpError(
        "expects static input channels divisible by the radix");
  int64_t c = in[1] / r;
  if (c % k != 0)
    return op.emitOpError("expects channels per split (")
           << c << ") divisible by the cardinality (" << k << ")";
  auto expect = [&](Value v, StringRef name,
                    ArrayRef<int64_t> shape) -> LogicalResult {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getShape() != shape) {
      std::string want;
      llvm::raw_string_ostream os(want);
      llvm::interleave(shape, os, "x");
      return op.emitOpError("expects ")
             << name << " of shape " << want << ", got " << t;
    }
    return success();
  };
  ArrayRef<int64_t> w1 = op.getFc1Weight().getType().getShape();
  if (w1.size() != 4 || ShapedType::isDynamic(w1[0]) || w1[0] % k != 0)
    return op.emitOpError("expects fc1_weight of shape I x ")
           << c / k << " x 1 x 1 with I divisible by the cardinality";
  int64_t inter = w1[0];
  if (failed(expect(op.getFc1Weight(), "fc1_weight", {inter, c / k, 1, 1})) ||
      failed(expect(op.getFc1Bias(), "fc1_bias", {inter})) ||
      failed(expect(op.getBnScale(), "bn_scale", {inter})) ||
      failed(expect(op.getBnBias(), "bn_bias", {inter})) ||
      failed(expect(op.getBnMean(), "bn_mean", {inter})) ||
      failed(expect(op.getBnVariance(), "bn_variance", {inter})) ||
      failed(
          expect(op.getFc2Weight(), "fc2_weight", {c * r, inter / k, 1, 1})) ||
      failed(expect(op.getFc2Bias(), "fc2_bias", {c * r})))
    return failure();
  ArrayRef<int64_t> out = output.getShape();
  std::string name = outputName.str();
  if (failed(checkSize(o, name + " batch", in[0], out[0])) ||
      failed(checkSize(o, name + " channels", c, out[1])) ||
      failed(checkSize(o, name + " height", in[2], out[2])) ||
      failed(checkSize(o, name + " width", in[3], out[3])))
    return failure();
  if (!(op.getEpsilon().convertToDouble() >= 0))
    return op.emitOpError("expects epsilon >= 0");
  return success();
}

LogicalResult SplitAttentionOp::verify() {
  return verifySplitAttention(*this, getType(), "result");
}

LogicalResult SplitAttentionGradOp::verify() {
  if (failed(verifySplitAttention(*this, getResultGrad().getType(),
                                  "result_grad")))
    return failure();
  // Each gradient has its operand's type; operands 1.. are input, fc1_weight,
  // fc1_bias, bn_scale, bn_bias, then (after the statistics) fc2's two.
  const unsigned operandOf[] = {1, 2, 3, 4, 5, 8, 9};
  for (auto [i, result] : llvm::enumerate(getResults())) {
    Value operand = getOperand(operandOf[i]);
    if (result.getType() != operand.getType())
      return emitOpError("expects result ")
             << i << " to have the type of its operand, " << operand.getType()
             << ", got " << result.getType();
  }
  return success();
}
