//===- GroveTransformerOps.cpp - Verifiers of layer norm and embeddings ---===//
//
// The lowerings (lib/Conversion/GroveToLinalg/Transformer.cpp) rely on
// these rules: a layer norm's scale is its input's trailing shape, an
// embedding's result is the ids' shape and a row.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::grove;

/// `scale` and `bias` are one shape, static, the trailing dimensions of
/// `input` (of one element type), with at least one leading dimension.
static LogicalResult verifyNormalizedShape(Operation *op,
                                           RankedTensorType input,
                                           RankedTensorType scale,
                                           RankedTensorType bias) {
  if (scale != bias)
    return op->emitOpError("expects scale and bias of one type, got ")
           << scale << " and " << bias;
  if (scale.getElementType() != input.getElementType())
    return op->emitOpError("expects scale of the input's element type, got ")
           << scale.getElementType() << " and " << input.getElementType();
  if (scale.getRank() < 1 || scale.getRank() >= input.getRank())
    return op->emitOpError("expects scale of rank 1 to ")
           << input.getRank() - 1 << " (the input's rank " << input.getRank()
           << " less at least one row dimension), got " << scale.getRank();
  if (!scale.hasStaticShape())
    return op->emitOpError("expects a static scale shape, got ") << scale;
  ArrayRef<int64_t> trailing = input.getShape().take_back(scale.getRank());
  for (auto [x, s] : llvm::zip(trailing, scale.getShape()))
    if (!ShapedType::isDynamic(x) && x != s)
      return op->emitOpError("expects the input's trailing dimensions to be "
                             "the scale's shape ")
             << scale << ", got " << input;
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyNormalizedShape(*this, getInput().getType(),
                                   getScale().getType(), getBias().getType())))
    return failure();
  if (getType() != getInput().getType())
    return emitOpError("expects the result to be the input's type ")
           << getInput().getType() << ", got " << getType();
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("expects a positive epsilon");
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  RankedTensorType x = getInput().getType(), s = getScale().getType();
  if (failed(verifyNormalizedShape(*this, x, s, s)))
    return failure();
  if (getOutputGrad().getType() != x || getInputGrad().getType() != x)
    return emitOpError("expects output_grad and input_grad of the input's "
                       "type ")
           << x << ", got " << getOutputGrad().getType() << " and "
           << getInputGrad().getType();
  if (getScaleGrad().getType() != s || getBiasGrad().getType() != s)
    return emitOpError("expects scale_grad and bias_grad of the scale's type ")
           << s;
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("expects a positive epsilon");
  return success();
}

LogicalResult EmbeddingOp::verify() {
  RankedTensorType table = getTable().getType(), ids = getIds().getType();
  if (table.getRank() != 2)
    return emitOpError("expects a rank-2 table, got ") << table;
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(table.getDimSize(1));
  auto expected = RankedTensorType::get(shape, table.getElementType());
  if (getType() != expected)
    return emitOpError("expects the ids' shape and a table row, ")
           << expected << ", got " << getType();
  return success();
}

LogicalResult GroupByIndexOp::verify() {
  int64_t n = getIndices().getType().getDimSize(0);
  int64_t order = getOrder().getType().getDimSize(0);
  if (order != n)
    return emitOpError("expects one order entry per index (")
           << (ShapedType::isDynamic(n) ? "?" : std::to_string(n)) << "), got "
           << getOrder().getType();
  int64_t groups = getNumGroups();
  if (groups >= int64_t(INT32_MAX))
    return emitOpError("expects num_groups below 2^31 - 1, got ") << groups;
  if (getOffsets().getType().getDimSize(0) != groups + 1)
    return emitOpError("expects num_groups + 1 = ")
           << groups + 1 << " offsets, got " << getOffsets().getType();
  return success();
}

/// A rate in [0, 1) and a stream below 2^32 (it is xored into a 32-bit key
/// word).
static LogicalResult verifyDraw(Operation *op, double rate, int64_t stream) {
  if (!(rate >= 0.0 && rate < 1.0))
    return op->emitOpError("expects a rate in [0, 1), got ") << rate;
  if (stream > int64_t(UINT32_MAX))
    return op->emitOpError("expects a stream below 2^32, got ") << stream;
  return success();
}

LogicalResult DropoutOp::verify() {
  StringRef name = getGenerator();
  if (name.empty() || !llvm::all_of(name, [](char c) {
        return llvm::isAlnum(c) || c == '_' || c == '.';
      }))
    return emitOpError("expects a generator name of letters, digits, '_' and "
                       "'.', got '")
           << name << "'";
  return verifyDraw(*this, getRate().convertToDouble(), getStream());
}

LogicalResult PhiloxDropoutOp::verify() {
  return verifyDraw(*this, getRate().convertToDouble(), getStream());
}
