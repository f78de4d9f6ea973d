//===- GroveTransformerOps.cpp - Verifiers of layer norm and embeddings ---===//
//
// The lowerings (lib/Conversion/GroveToLinalg/Transformer.cpp) rely on
// these rules: a layer norm's scale is its input's trailing shape, an
// embedding's result is the ids' shape and a row.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <optional>

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
  if (!scale.hasStaticShape() || scale.getNumElements() == 0)
    return op->emitOpError("expects a static, non-empty scale shape, got ")
           << scale;
  // The row's size is a constant of the lowering: the trailing dimensions
  // are static.
  if (input.getShape().take_back(scale.getRank()) != scale.getShape())
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

/// A rate in [0, 1).
static LogicalResult verifyDraw(Operation *op, double rate) {
  if (!(rate >= 0.0 && rate < 1.0))
    return op->emitOpError("expects a rate in [0, 1), got ") << rate;
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
  return verifyDraw(*this, getRate().convertToDouble());
}

LogicalResult PhiloxDropoutOp::verify() {
  return verifyDraw(*this, getRate().convertToDouble());
}

/// Two sizes that may be equal: one dynamic, or both the same.
static bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// The rules grove.attention and its gradient share: rank-4 query, key and
/// value of one element type, [B, H, Sq, D], [B, H, Sk, D], [B, H, Sk,
/// Dv]; `output` [B, H, Sq, Dv]; a mask broadcasting to [B, H, Sq, Sk];
/// a positive scale (or a static D for the default); a key tile of 1 or
/// more.
static LogicalResult verifyAttention(Operation *op, Value query, Value key,
                                     Value value, Value mask, Type output,
                                     std::optional<double> scale,
                                     int64_t keyTile) {
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  auto v = cast<RankedTensorType>(value.getType());
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return op->emitOpError("expects rank-4 query, key and value [B, H, S, "
                           "D], got ")
           << q << ", " << k << " and " << v;
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return op->emitOpError("expects query, key and value of one element "
                           "type, got ")
           << q << ", " << k << " and " << v;
  for (int64_t d : {0, 1})
    if (!compatible(q.getDimSize(d), k.getDimSize(d)) ||
        !compatible(q.getDimSize(d), v.getDimSize(d)))
      return op->emitOpError("expects one batch and head count (dimensions "
                             "0 and 1) in query, key and value, got ")
             << q << ", " << k << " and " << v;
  if (!compatible(k.getDimSize(2), v.getDimSize(2)))
    return op->emitOpError("expects key and value of one length "
                           "(dimension 2), got ")
           << k << " and " << v;
  if (!compatible(q.getDimSize(3), k.getDimSize(3)))
    return op->emitOpError("expects query and key of one head size "
                           "(dimension 3), got ")
           << q << " and " << k;
  auto expected = RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType());
  auto out = cast<RankedTensorType>(output);
  if (out.getElementType() != q.getElementType() ||
      out.getShape() != expected.getShape())
    return op->emitOpError("expects an output of type ")
           << expected << ", got " << out;
  if (mask) {
    auto m = cast<RankedTensorType>(mask.getType());
    int64_t full[4] = {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2),
                       k.getDimSize(2)};
    bool fits = m.getRank() == 4 && m.getElementType() == q.getElementType();
    for (int64_t d = 0; fits && d < 4; ++d)
      fits = m.getDimSize(d) == 1 || compatible(m.getDimSize(d), full[d]);
    if (!fits)
      return op->emitOpError("expects a rank-4 mask of the query's element "
                             "type broadcasting to [B, H, Sq, Sk], got ")
             << m;
  }
  if (scale && !(*scale > 0.0 && std::isfinite(*scale)))
    return op->emitOpError("expects a positive scale, got ") << *scale;
  if (!scale && q.isDynamicDim(3))
    return op->emitOpError("expects a static head size or a scale, got ") << q;
  if (keyTile < 1)
    return op->emitOpError("expects a key_tile of at least 1, got ") << keyTile;
  return success();
}

static std::optional<double> scaleOf(std::optional<APFloat> scale) {
  if (!scale)
    return std::nullopt;
  return scale->convertToDouble();
}

LogicalResult AttentionOp::verify() {
  return verifyAttention(*this, getQuery(), getKey(), getValue(), getMask(),
                         getType(), scaleOf(getScale()), getKeyTile());
}

/// `scale`, or 1/√D for the query's head size D (static: the verifier).
static double scaleOrDefault(std::optional<APFloat> scale, Value query) {
  if (scale)
    return scale->convertToDouble();
  auto q = cast<RankedTensorType>(query.getType());
  return 1.0 / std::sqrt(double(q.getDimSize(3)));
}

double AttentionOp::getScaleOrDefault() {
  return scaleOrDefault(getScale(), getQuery());
}

double AttentionGradOp::getScaleOrDefault() {
  return scaleOrDefault(getScale(), getQuery());
}

LogicalResult AttentionGradOp::verify() {
  if (failed(verifyAttention(*this, getQuery(), getKey(), getValue(), getMask(),
                             getOutput().getType(), scaleOf(getScale()),
                             getKeyTile())))
    return failure();
  if (getOutputGrad().getType() != getOutput().getType())
    return emitOpError("expects output_grad of the output's type ")
           << getOutput().getType() << ", got " << getOutputGrad().getType();
  if (getQueryGrad().getType() != getQuery().getType() ||
      getKeyGrad().getType() != getKey().getType() ||
      getValueGrad().getType() != getValue().getType())
    return emitOpError("expects gradients of the query's, key's and value's "
                       "types");
  return success();
}
