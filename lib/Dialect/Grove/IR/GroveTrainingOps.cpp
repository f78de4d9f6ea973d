//===- GroveTrainingOps.cpp - Verifiers of the gradient and loss ops ------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::grove;

static bool isScalarFloat(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.getRank() == 0 && isa<FloatType>(t.getElementType());
}

YieldOp ValueAndGradOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult ValueAndGradOp::verify() {
  if (getWrt().empty())
    return emitOpError("expects at least one param in wrt");
  if (getGradients().size() != getWrt().size())
    return emitOpError("expects one gradient per param in wrt (")
           << getWrt().size() << "), got " << getGradients().size();
  llvm::DenseSet<Attribute> seen;
  for (Attribute name : getWrt())
    if (!seen.insert(name).second)
      return emitOpError("differentiates with respect to ") << name << " twice";
  if (!isScalarFloat(getValue().getType()))
    return emitOpError("expects a scalar value (a rank-0 float tensor), got ")
           << getValue().getType();
  Block &body = getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != 1 ||
      yield.getValues()[0].getType() != getValue().getType())
    return emitOpError("expects its body to yield one value of type ")
           << getValue().getType();
  WalkResult nested = getBody().walk([](ValueAndGradOp inner) {
    inner.emitOpError("is nested in another grove.value_and_grad; "
                      "higher-order gradients are not supported");
    return WalkResult::interrupt();
  });
  return failure(nested.wasInterrupted());
}

LogicalResult
ValueAndGradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  for (auto [name, gradient] : llvm::zip(getWrt(), getGradients())) {
    auto ref = cast<FlatSymbolRefAttr>(name);
    auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, ref);
    if (!param)
      return emitOpError("differentiates with respect to ")
             << ref << ", which is not a grove.param";
    RankedTensorType type = param.getTensorType();
    if (!isa<FloatType>(type.getElementType()))
      return emitOpError("differentiates with respect to ")
             << ref << " of type " << type << ", which is not a float tensor";
    if (gradient.getType() != type)
      return emitOpError("gradient of ")
             << ref << " has type " << gradient.getType() << ", expected "
             << type;
  }
  return success();
}

LogicalResult OneHotOp::verify() {
  RankedTensorType labels = getLabels().getType(), result = getType();
  if (result.getRank() != labels.getRank() + 1)
    return emitOpError("expects a result of rank ") << labels.getRank() + 1;
  for (int64_t d = 0; d < labels.getRank(); ++d)
    if (labels.getDimSize(d) != result.getDimSize(d))
      return emitOpError("expects the result to extend the labels' shape "
                         "with the class dimension");
  if (result.isDynamicDim(result.getRank() - 1) ||
      result.getDimSize(result.getRank() - 1) < 1)
    return emitOpError("expects a static, positive class count (the "
                       "result's last dimension)");
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  RankedTensorType logits = getLogits().getType();
  RankedTensorType labels = getLabels().getType();
  if (logits.getRank() != 2 || labels.getRank() != 1)
    return emitOpError("expects N x C logits and N labels");
  int64_t n = logits.getDimSize(0), l = labels.getDimSize(0);
  if (ShapedType::isDynamic(n) != ShapedType::isDynamic(l) ||
      (!ShapedType::isDynamic(n) && n != l))
    return emitOpError("expects as many labels as logit rows");
  if (logits.isDynamicDim(1))
    return emitOpError("expects a static class count");
  // A mean over no rows is NaN (dynamic batches are checked at run time).
  if (n == 0)
    return emitOpError("expects at least one row, got an empty batch");
  if (getType() != RankedTensorType::get({}, logits.getElementType()))
    return emitOpError("expects a rank-0 result of the logits' element type");
  double eps = getLabelSmoothing().convertToDouble();
  if (!(eps >= 0.0 && eps <= 1.0))
    return emitOpError("expects label_smoothing in [0, 1], got ")
           << llvm::formatv("{0}", llvm::format("%g", eps)).str();
  return success();
}

LogicalResult MSELossOp::verify() {
  if (getPrediction().getType() != getTarget().getType())
    return emitOpError("expects prediction and target of one type");
  if (getType() !=
      RankedTensorType::get({}, getPrediction().getType().getElementType()))
    return emitOpError("expects a rank-0 result of the operands' element type");
  if (llvm::is_contained(getPrediction().getType().getShape(), 0))
    return emitOpError("expects at least one element, got ")
           << getPrediction().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

static LogicalResult checkRange(Operation *op, StringRef what, double value,
                                double low, double high, bool openHigh) {
  if (value >= low && (openHigh ? value < high : value <= high))
    return success();
  auto g = [](double v) { return llvm::formatv("{0}", llvm::format("%g", v)); };
  return op->emitOpError("expects ")
         << what << " in [" << g(low).str() << ", " << g(high).str()
         << (openHigh ? ")" : "]") << ", got " << g(value).str();
}

/// Params and gradients pair up, the learning rate is a scalar, the name
/// makes valid state names, the hyperparameters are in range.
template <typename Op> static LogicalResult verifyOptimizer(Op optimizer) {
  Operation *op = optimizer.getOperation();
  ArrayAttr params = optimizer.getParams();
  ValueRange gradients = optimizer.getGradients();
  Value lr = optimizer.getLearningRate();
  StringRef name = optimizer.getName();
  if (params.empty())
    return op->emitOpError("expects at least one param");
  if (params.size() != gradients.size())
    return op->emitOpError("expects one gradient per param (")
           << params.size() << "), got " << gradients.size();
  llvm::DenseSet<Attribute> seen;
  for (Attribute p : params)
    if (!seen.insert(p).second)
      return op->emitOpError("updates ") << p << " twice";
  // One element type, f32 or f64, in which the moments and the update are
  // computed; bf16 and f16 params are updated through f32 master copies.
  Type element =
      cast<RankedTensorType>(gradients[0].getType()).getElementType();
  bool low = element.isBF16() || element.isF16();
  if (low && !optimizer.getMasterWeights())
    return op->emitOpError("expects f32 or f64 params, got ")
           << element << " (bf16 and f16 params need master_weights)";
  if (!low && optimizer.getMasterWeights())
    return op->emitOpError("keeps master weights of bf16 or f16 params, got ")
           << element << " params";
  if (!low && !element.isF32() && !element.isF64())
    return op->emitOpError("expects f32 or f64 params, got ") << element;
  for (Value g : gradients)
    if (cast<RankedTensorType>(g.getType()).getElementType() != element)
      return op->emitOpError("expects params of one element type, got ")
             << element << " and "
             << cast<RankedTensorType>(g.getType()).getElementType();
  auto rateType = RankedTensorType::get({}, optimizer.getElementType());
  if (lr && lr.getType() != rateType)
    return op->emitOpError("expects a learning_rate of type ")
           << rateType << ", got " << lr.getType();
  if (name.empty() || name.contains('/'))
    return op->emitOpError("expects a non-empty state name without '/'");
  return failure(failed(checkRange(op, "weight_decay",
                                   optimizer.getWeightDecay().convertToDouble(),
                                   0.0, 1e30, false)) ||
                 failed(checkRange(op, "max_grad_norm",
                                   optimizer.getMaxGradNorm().convertToDouble(),
                                   0.0, 1e30, false)));
}

/// β1, β2 in [0, 1) and ε >= 0: the Adam family's moments.
template <typename Op> static LogicalResult verifyMoments(Op op) {
  return failure(
      failed(checkRange(op, "beta1", op.getBeta1().convertToDouble(), 0.0, 1.0,
                        /*openHigh=*/true)) ||
      failed(checkRange(op, "beta2", op.getBeta2().convertToDouble(), 0.0, 1.0,
                        /*openHigh=*/true)) ||
      failed(checkRange(op, "epsilon", op.getEpsilon().convertToDouble(), 0.0,
                        1e30, false)));
}

LogicalResult
mlir::grove::verifyOptimizerSymbols(OptimizerOpInterface op,
                                    SymbolTableCollection &table) {
  for (auto [name, gradient] : llvm::zip(op.getParams(), op.getGradients())) {
    auto ref = cast<FlatSymbolRefAttr>(name);
    auto param = table.lookupNearestSymbolFrom<ParamOp>(op, ref);
    if (!param)
      return op->emitOpError("updates ")
             << ref << ", which is not a grove.param";
    if (!isa<FloatType>(param.getTensorType().getElementType()))
      return op->emitOpError("updates ")
             << ref << " of type " << param.getTensorType()
             << ", which is not a float tensor";
    if (gradient.getType() != param.getTensorType())
      return op->emitOpError("gradient of ")
             << ref << " has type " << gradient.getType() << ", expected "
             << param.getTensorType();
  }
  return success();
}

LogicalResult SGDOp::verify() {
  if (failed(verifyOptimizer(*this)) ||
      failed(checkRange(*this, "momentum", getMomentum().convertToDouble(), 0.0,
                        1.0, /*openHigh=*/true)))
    return failure();
  if (getNesterov() && getMomentum().isZero())
    return emitOpError("expects a momentum with nesterov");
  return success();
}

LogicalResult AdamOp::verify() {
  return failure(failed(verifyOptimizer(*this)) ||
                 failed(verifyMoments(*this)));
}

/// `weight_decays` and `trust_mask`, where given, have one entry per param;
/// decays are finite and non-negative.
template <typename Op> static LogicalResult verifyGroups(Op op) {
  size_t n = op.getParams().size();
  if (auto decays = op.getWeightDecays()) {
    if (decays->size() != n)
      return op.emitOpError("expects one weight_decays entry per param (")
             << n << "), got " << decays->size();
    for (double d : *decays)
      if (failed(checkRange(op, "weight_decays entry", d, 0.0, 1e30, false)))
        return failure();
  }
  if (auto mask = op.getTrustMask(); mask && mask->size() != n)
    return op.emitOpError("expects one trust_mask entry per param (")
           << n << "), got " << mask->size();
  return success();
}

LogicalResult LAMBOp::verify() {
  return failure(failed(verifyOptimizer(*this)) ||
                 failed(verifyMoments(*this)) || failed(verifyGroups(*this)));
}

LogicalResult LANSOp::verify() {
  return failure(failed(verifyOptimizer(*this)) ||
                 failed(verifyMoments(*this)) || failed(verifyGroups(*this)));
}

LogicalResult AdagradOp::verify() {
  return failure(
      failed(verifyOptimizer(*this)) ||
      failed(checkRange(*this, "lr_decay", getLrDecay().convertToDouble(), 0.0,
                        1e30, false)) ||
      failed(checkRange(*this, "initial_accumulator_value",
                        getInitialAccumulatorValue().convertToDouble(), 0.0,
                        1e30, false)) ||
      failed(checkRange(*this, "epsilon", getEpsilon().convertToDouble(), 0.0,
                        1e30, false)));
}

LogicalResult AdaAlterOp::verify() {
  if (failed(verifyOptimizer(*this)))
    return failure();
  // B + ε must be positive where B is still zero.
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("expects a positive epsilon");
  if (getPeriod() < 1)
    return emitOpError("expects a period of at least 1, got ") << getPeriod();
  int64_t warmup = getSyncWarmupSteps();
  if (warmup < 0)
    return emitOpError("expects sync_warmup_steps >= 0, got ") << warmup;
  // With period 1 every step is synchronous already.
  if (warmup > 0 && getPeriod() == 1)
    return emitOpError("expects a period above 1 with sync_warmup_steps");
  return success();
}

//===----------------------------------------------------------------------===//
// Learning-rate schedules
//===----------------------------------------------------------------------===//

LogicalResult LRScheduleOp::verify() {
  int64_t warmup = getWarmupSteps(), total = getTotalSteps();
  if (warmup < 0)
    return emitOpError("expects warmup_steps >= 0, got ") << warmup;
  ScheduleKind kind = getKind();
  bool decays =
      kind == ScheduleKind::Polynomial || kind == ScheduleKind::Cosine;
  if (decays && total <= warmup)
    return emitOpError("expects total_steps above warmup_steps (")
           << warmup << "), got " << total;
  if (kind == ScheduleKind::StepDecay && getStepSize() < 1)
    return emitOpError("expects a step_size of at least 1, got ")
           << getStepSize();
  // gamma^k is computed as exp(k log gamma).
  if (!(getGamma().convertToDouble() > 0.0))
    return emitOpError("expects a positive gamma");
  return checkRange(*this, "power", getPower().convertToDouble(), 0.0, 1e30,
                    false);
}

LogicalResult ElasticLROp::verify() {
  RankedTensorType type = getType();
  if (type.getRank() != 0 ||
      (!type.getElementType().isF32() && !type.getElementType().isF64()))
    return emitOpError("expects a rank-0 f32 or f64 rate, got ") << type;
  return success();
}
