//===- ExpandTrainingOps.cpp - Losses into primitive grove ops ------------===//
//
// Losses stay whole through grove-autodiff, whose VJPs use their closed
// forms (cheaper and more accurate than differentiating the expansion),
// then become the primitive ops every target already lowers. Optimizers
// become reads, elementwise updates and writes of their state, which this
// pass declares first (zero-initialised) where the module does not.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveArith.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"
#include "grove/Dialect/Grove/Transforms/StateDecl.h"
#include "grove/Support/LocatedMessage.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Path.h"

#include <cmath>

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEEXPANDTRAININGOPS
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// Indices that are a function's argument (labels, embedding ids) get
/// `grove.below` = `bound` (the smallest, if several ops read them), so that
/// the runtime rejects one out of range before the entry writes any state.
/// Through calls too: a caller's argument passed straight to the callee's
/// bounded argument is bounded alike (inference entries call the forward).
void boundIndices(Value indices, int64_t bound, RewriterBase &rewriter) {
  if (ShapedType::isDynamic(bound) || bound < 1)
    return;
  SmallVector<Value> work = {indices};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    auto arg = dyn_cast<BlockArgument>(work.pop_back_val());
    if (!arg || !seen.insert(arg).second)
      continue;
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!func || arg.getOwner() != &func.getBody().front())
      continue;
    unsigned i = arg.getArgNumber();
    int64_t least = bound;
    if (auto old = func.getArgAttrOfType<IntegerAttr>(i, kBelowAttr))
      least = std::min(least, old.getInt());
    rewriter.modifyOpInPlace(func, [&] {
      func.setArgAttr(i, kBelowAttr, rewriter.getI64IntegerAttr(least));
    });
    auto module = func->getParentOfType<ModuleOp>();
    if (!module)
      continue;
    module.walk([&](func::CallOp call) {
      if (call.getCallee() == func.getSymName() && i < call.getNumOperands())
        work.push_back(call.getOperand(i));
    });
  }
}

/// A located run-time check that dynamic `size` is at least `least`: the
/// call fails with `what` (GROVE_ERROR_INVALID_ARGUMENT) and writes no state.
void requireAtLeast(OpBuilder &b, Location loc, Value size, int64_t least,
                    const Twine &what) {
  Value atLeast = arith::MaxSIOp::create(
      b, loc, size, arith::ConstantIndexOp::create(b, loc, least));
  AgreeDimsOp::create(b, loc, b.getIndexType(), atLeast, size,
                      b.getStringAttr(locatedMessage(loc, what)),
                      /*at_least=*/true);
}

/// The product of `x`'s dynamic `axes` sizes times the static ones, or
/// null where all are static.
Value dynamicCount(OpBuilder &b, Location loc, Value x,
                   ArrayRef<int64_t> axes) {
  auto [known, n] = GroveArith{b, loc}.sizeProduct(x, axes);
  if (n && known != 1)
    n = arith::MulIOp::create(b, loc, n,
                              arith::ConstantIndexOp::create(b, loc, known));
  return n;
}

/// A loss over an empty batch has no mean: the call fails instead of
/// returning NaN and stepping on it.
void requireNonEmpty(OpBuilder &b, Operation *op, Value x,
                     ArrayRef<int64_t> axes, StringRef what) {
  if (Value n = dynamicCount(b, op->getLoc(), x, axes))
    requireAtLeast(b, op->getLoc(), n, 1,
                   op->getName().getStringRef() + ": " + what);
}

/// -mean_n sum_c target[n, c] log_softmax(logits)[n, c].
struct ExpandSoftmaxCrossEntropy : OpRewritePattern<SoftmaxCrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    boundIndices(op.getLabels(), op.getLogits().getType().getDimSize(1),
                 rewriter);
    Value logits = op.getLogits();
    RankedTensorType type = op.getLogits().getType();
    requireNonEmpty(rewriter, op, logits, {0}, "rows of the batch");
    Value logp = LogSoftmaxOp::create(rewriter, loc, logits,
                                      rewriter.getI64IntegerAttr(1));
    Value target = OneHotOp::create(rewriter, loc, type, op.getLabels());
    double eps = op.getLabelSmoothing().convertToDouble();
    if (eps != 0.0) {
      Value kept =
          MulOp::create(rewriter, loc, target,
                        GroveArith{rewriter, loc}.scalar(logits, 1.0 - eps));
      target = AddOp::create(rewriter, loc, kept,
                             GroveArith{rewriter, loc}.scalar(
                                 logits, eps / double(type.getDimSize(1))));
    }
    Value rows = ReduceSumOp::create(rewriter, loc,
                                     MulOp::create(rewriter, loc, target, logp),
                                     ArrayRef<int64_t>{1});
    Value mean =
        ReduceMeanOp::create(rewriter, loc, rows, ArrayRef<int64_t>{0});
    rewriter.replaceOpWithNewOp<MulOp>(
        op, mean, GroveArith{rewriter, loc}.scalar(logits, -1.0));
    return success();
  }
};

/// mean((prediction - target)^2) over every element.
struct ExpandMSELoss : OpRewritePattern<MSELossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MSELossOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = op.getPrediction().getType().getRank();
    requireNonEmpty(rewriter, op, op.getPrediction(),
                    llvm::to_vector(llvm::seq<int64_t>(0, rank)),
                    "elements of the prediction");
    Value d = SubOp::create(rewriter, loc, op.getPrediction(), op.getTarget());
    rewriter.replaceOpWithNewOp<ReduceMeanOp>(
        op, MulOp::create(rewriter, loc, d, d),
        llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    return success();
  }
};

/// Batch statistics, the inference form over them, and the running
/// statistics' update (torch.nn.BatchNorm's, with the unbiased variance).
struct ExpandBatchNormTraining : OpRewritePattern<BatchNormTrainingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormTrainingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    ChannelArith v(rewriter, loc, x);
    // One value per channel has no unbiased variance (torch raises); the
    // verifier refuses it where the sizes are static.
    if (Value n = dynamicCount(rewriter, loc, x, v.others()))
      requireAtLeast(rewriter, loc, n, 2,
                     "grove.batch_norm_training: values per channel");
    auto [mean, var] = v.batchStatistics(x);
    double eps = op.getEpsilon().convertToDouble();
    Value y = BatchNormOp::create(rewriter, loc, x, op.getScale(), op.getBias(),
                                  mean, var, eps);
    // n / (n - 1), n the elements of a channel: a constant (computed in
    // double), or from the run-time sizes where some are dynamic.
    RankedTensorType type = op.getInput().getType();
    SmallVector<int64_t> others = v.others();
    Value bessel;
    if (llvm::none_of(others,
                      [&](int64_t d) { return type.isDynamicDim(d); })) {
      double n = 1;
      for (int64_t d : others)
        n *= double(type.getDimSize(d));
      bessel = v.scalar(x, n / (n - 1.0));
    } else {
      Value n = v.count(x, others);
      bessel = v.div(n, v.sub(n, v.scalar(x, 1.0)));
    }
    double m = op.getMomentum().convertToDouble();
    auto update = [&](FlatSymbolRefAttr name, Value batch) {
      Value old =
          GetParamOp::create(rewriter, loc, op.getScale().getType(), name);
      Value kept = v.mul(v.scalar(x, 1.0 - m), old);
      SetParamOp::create(rewriter, loc, name,
                         v.add(kept, v.mul(v.scalar(x, m), batch)));
    };
    update(op.getRunningMeanAttr(), mean);
    update(op.getRunningVarAttr(), v.mul(var, bessel));
    rewriter.replaceOp(op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// The generators each function draws from: its offset advances once per
/// call (advanceGenerators).
using Draws = llvm::SetVector<std::pair<Operation *, StringRef>>;

/// A dropout reads its generator's seed and offset: the pure op over them.
struct ExpandDropout : OpRewritePattern<DropoutOp> {
  ExpandDropout(MLIRContext *ctx, Draws &draws)
      : OpRewritePattern(ctx), draws(draws) {}
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getRate().isZero()) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    Location loc = op.getLoc();
    auto counter = RankedTensorType::get({}, rewriter.getI64Type());
    auto read = [&](StringRef name) {
      return GetParamOp::create(rewriter, loc, counter,
                                FlatSymbolRefAttr::get(op.getContext(), name));
    };
    Value seed = read(op.getSeedName()), offset = read(op.getOffsetName());
    draws.insert({op->getParentOfType<func::FuncOp>(), op.getGenerator()});
    rewriter.replaceOpWithNewOp<PhiloxDropoutOp>(
        op, op.getType(), op.getInput(), seed, offset, op.getRateAttr(),
        op.getStreamAttr());
    return success();
  }
  Draws &draws;
};

/// Each generator's seed and offset: i64 scalars starting at 0.
LogicalResult declareGenerators(ModuleOp module) {
  auto counter =
      RankedTensorType::get({}, IntegerType::get(module.getContext(), 64));
  WalkResult result = module.walk([&](DropoutOp op) {
    for (const std::string &name : {op.getSeedName(), op.getOffsetName()})
      if (failed(declareState(module, op, name, counter, 0.0)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// A function that draws advances its generators' offsets by one at its
/// end, so that the next call draws new masks.
void advanceGenerators(const Draws &draws) {
  for (auto [op, generator] : draws) {
    auto func = cast<func::FuncOp>(op);
    Operation *end = func.getBody().front().getTerminator();
    OpBuilder b(end);
    Location loc = func.getLoc();
    auto name = FlatSymbolRefAttr::get(func.getContext(),
                                       (generator + ".offset").str());
    Value offset = GetParamOp::create(
        b, loc, RankedTensorType::get({}, b.getI64Type()), name);
    Value next = arith::AddIOp::create(
        b, loc, tensor::ExtractOp::create(b, loc, offset),
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1));
    SetParamOp::create(
        b, loc, name,
        tensor::FromElementsOp::create(
            b, loc, RankedTensorType::get({}, b.getI64Type()), next));
  }
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// Element-wise arithmetic on tensors and rank-0 constants of one element
/// type, as the optimizers' formulas read.
struct Arith : GroveArith {
  Type element;

  Value c(double v) { return scalarOf(element, v); }
  Value min(Value x, Value y) { return MinOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return MaxOp::create(b, loc, x, y); }
  Value floor(Value x) { return FloorOp::create(b, loc, x); }
  Value select(Value mask, Value x, Value y) {
    return SelectOp::create(b, loc, mask, x, y);
  }
  Value sumAll(Value t) {
    int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
    return ReduceSumOp::create(b, loc, t,
                               llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  }
  /// The L2 norm of every element of `t`, rank 0.
  Value norm(Value t) { return sqrt(sumAll(mul(t, t))); }
  /// x^p for x >= 0 and a constant p >= 0 (0^0 = 1).
  Value pow(Value x, double p) {
    if (p == 0.0)
      return c(1.0);
    if (p == 1.0)
      return x;
    return exp(mul(c(p), log(x)));
  }
  Value log(Value x) { return LogOp::create(b, loc, x); }
  Value get(StringRef name, Type type) {
    return GetParamOp::create(b, loc, type,
                              FlatSymbolRefAttr::get(b.getContext(), name));
  }
  void set(StringRef name, Value v) {
    SetParamOp::create(b, loc, FlatSymbolRefAttr::get(b.getContext(), name), v);
  }
};

/// The state writes a function's optimizers make themselves, guarded by
/// their own `ok`, and those `ok`s (a skip must change no other state
/// either: guardStateWrites).
struct SkipGuards {
  llvm::MapVector<Operation *, SmallVector<Value>> oks;
  llvm::DenseSet<Operation *> own;
};

/// A rank-0 integer tensor from `v` (an i64 scalar).
Value scalarTensor(OpBuilder &b, Location loc, Value v) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, v.getType()), v);
}

/// `ok` (a rank-0 float mask) as an i1.
Value isSet(OpBuilder &b, Location loc, Value ok) {
  Value v = tensor::ExtractOp::create(b, loc, ok);
  return arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGT, v,
      arith::ConstantOp::create(b, loc, b.getFloatAttr(v.getType(), 0.0)));
}

/// `updated` where `ok`, else `old`: grove.select for floats, a scalar
/// select for rank-0 integers (counters).
FailureOr<Value> guarded(OpBuilder &b, Location loc, Value ok, Value updated,
                         Value old) {
  auto type = cast<RankedTensorType>(updated.getType());
  if (isa<FloatType>(type.getElementType()))
    return SelectOp::create(b, loc, ok, updated, old).getResult();
  if (type.getRank() != 0)
    return failure();
  Value chosen = arith::SelectOp::create(
      b, loc, isSet(b, loc, ok), tensor::ExtractOp::create(b, loc, updated),
      tensor::ExtractOp::create(b, loc, old));
  return scalarTensor(b, loc, chosen);
}

/// One optimizer step as its expansion builds it: the gradients after
/// clipping, whether they are finite (`ok`, a rank-0 1 or 0, with
/// `skip_nonfinite`), the new step count t and the learning rate.
struct Step {
  Arith a;
  SkipGuards &guards;
  SmallVector<Value> gradients;
  Value ok;
  /// t, the steps taken with this one, as an i64 count (the state) and in
  /// f64 (exact to 2^53), in which the bias corrections are computed.
  Value count;
  Value t64;
  Value lr;
  /// The rate's operand (null for the attribute) and the attribute.
  Value lrOperand;
  double lrValue = 0.0;
  /// β^t by β, in f64: one per step, whatever the number of params.
  SmallVector<std::pair<double, Value>, 2> powers;
  /// With master weights: the params' own (bf16 or f16) element type, the
  /// optimizer (naming the master copies) and 1 on the optimizer's first
  /// step (rank-0 f32), where the copies are taken from the params.
  Type stored;
  OptimizerOpInterface op;
  Value first;

  /// Writes `updated` to state `name`, or keeps `old` where the step is
  /// skipped.
  void write(StringRef name, Value updated, Value old) {
    set(name, kept(updated, old));
  }
  /// `updated`, or `old` where the step is skipped.
  Value kept(Value updated, Value old) {
    return ok ? *guarded(a.b, a.loc, ok, updated, old) : updated;
  }
  /// Writes `v` to state `name` (one of the step's own writes).
  void set(StringRef name, Value v) {
    guards.own.insert(SetParamOp::create(
        a.b, a.loc, FlatSymbolRefAttr::get(a.b.getContext(), name), v));
  }
  /// Param `p` (whose gradient is `g`) as the update reads it: its f32
  /// master copy, taken from the param itself on the first step.
  Value param(StringRef p, Value g) {
    if (!stored)
      return a.get(p, g.getType());
    auto type = cast<RankedTensorType>(g.getType());
    Value own =
        ConvertOp::create(a.b, a.loc, type, a.get(p, type.clone(stored)));
    return a.select(first, own, a.get(masterName(p), type));
  }
  /// Writes param `p`: with master weights the copy, and the param rounded
  /// from it.
  void writeParam(StringRef p, Value updated, Value old) {
    if (!stored)
      return write(p, updated, old);
    Value copy = kept(updated, old);
    set(masterName(p), copy);
    auto type = cast<RankedTensorType>(copy.getType()).clone(stored);
    set(p, ConvertOp::create(a.b, a.loc, type, copy));
  }
  std::string masterName(StringRef p) { return op.getStateName(p, "master"); }
  Arith f64() { return Arith{{a.b, a.loc}, a.b.getF64Type()}; }
  /// An f64 rank-0 value in the params' element type.
  Value narrow(Value v) {
    if (a.element.isF64())
      return v;
    return ConvertOp::create(a.b, a.loc, RankedTensorType::get({}, a.element),
                             v);
  }
  /// β^t in f64, as exp(t log β) (torch computes β ** t in double).
  Value power(double beta) {
    for (auto [known, p] : powers)
      if (known == beta)
        return p;
    Arith d = f64();
    Value p = d.exp(d.mul(t64, d.c(std::log(beta))));
    powers.push_back({beta, p});
    return p;
  }
  Value correctionF64(double beta) {
    Arith d = f64();
    return d.sub(d.c(1.0), power(beta));
  }
  /// lr / (1 - β^t), in f64 and rounded once, as torch's step size.
  Value lrOverCorrection(double beta) {
    Arith d = f64();
    Value lr64 = d.c(lrValue);
    if (lrOperand)
      lr64 = a.element.isF64()
                 ? lrOperand
                 : ConvertOp::create(a.b, a.loc,
                                     RankedTensorType::get({}, d.element),
                                     lrOperand)
                       .getResult();
    return narrow(d.div(lr64, correctionF64(beta)));
  }
  /// 1 / (1 - β^t), or its square root: per-element loops multiply by
  /// these scalars instead of dividing by the corrections (a division is
  /// several times a multiply's cost in the update loops; the result
  /// differs by rounding only).
  Value inverseCorrection(double beta) {
    Arith d = f64();
    return narrow(d.div(d.c(1.0), correctionF64(beta)));
  }
  Value inverseSqrtCorrection(double beta) {
    Arith d = f64();
    return narrow(d.div(d.c(1.0), d.sqrt(correctionF64(beta))));
  }
  /// lr · ‖p‖ / ‖u‖ where both norms are non-zero, else lr: the trust
  /// ratio of LAMB and LANS.
  Value trustRatio(Value paramNorm, Value updateNorm) {
    Value paramNonZero = a.step(paramNorm);
    Value both = a.mul(paramNonZero, a.step(updateNorm));
    return a.select(both, a.mul(lr, a.div(paramNorm, updateNorm)), lr);
  }
};

/// The step counters' type: an integer count, exact at any step (a float
/// counter stops at 2^24 in f32), as torch's step counts are.
RankedTensorType counterType(MLIRContext *ctx) {
  return RankedTensorType::get({}, IntegerType::get(ctx, 64));
}

/// With master weights, the update runs in f32 on the gradients widened;
/// `first` marks the step (step counter `t0` = 0) that copies the params.
void takeMasterWeights(Step &s, Value t0) {
  OpBuilder &b = s.a.b;
  Location loc = s.a.loc;
  for (Value &g : s.gradients) {
    auto type = cast<RankedTensorType>(g.getType());
    s.stored = type.getElementType();
    g = ConvertOp::create(b, loc, type.clone(b.getF32Type()), g);
  }
  Value isZero = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, tensor::ExtractOp::create(b, loc, t0),
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
  s.first = scalarTensor(
      b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), isZero));
}

/// What every optimizer does first: with `skip_nonfinite`, `ok` says
/// whether the gradients are all finite; with a `max_grad_norm`, they are
/// scaled by min(1, max_norm / (global norm + 1e-6)), as
/// torch.nn.utils.clip_grad_norm_ does; the step counter advances (unless
/// skipped).
Step beginStep(OptimizerOpInterface op, OpBuilder &b, SkipGuards &guards) {
  Step s{Arith{{b, op.getLoc()}, op.getElementType()},
         guards,
         llvm::to_vector(op.getGradients()),
         Value(),
         Value(),
         Value(),
         Value(),
         op.getLearningRate(),
         op.getLr().convertToDouble(),
         {},
         Type(),
         op,
         Value()};
  Arith &a = s.a;
  Location loc = op.getLoc();
  Value t0 = a.get(op.getStepName(), counterType(b.getContext()));
  if (op.getMasterWeights())
    takeMasterWeights(s, t0);
  if (op.getSkipNonfinite()) {
    // g * 0 is NaN exactly where g is NaN or infinite; step(1 + NaN) is 0.
    Value poison;
    for (Value g : s.gradients) {
      Value z = a.sumAll(a.mul(g, a.c(0.0)));
      poison = poison ? a.add(poison, z) : z;
    }
    s.ok = a.step(a.add(poison, a.c(1.0)));
  }
  double maxNorm = op.getMaxGradNorm().convertToDouble();
  if (maxNorm > 0.0) {
    Value squares;
    for (Value g : s.gradients) {
      Value z = a.sumAll(a.mul(g, g));
      squares = squares ? a.add(squares, z) : z;
    }
    Value coef = a.div(a.c(maxNorm), a.add(a.sqrt(squares), a.c(1e-6)));
    Value scale = a.min(coef, a.c(1.0));
    for (Value &g : s.gradients)
      g = a.mul(g, scale);
  }
  Value t = arith::AddIOp::create(
      b, loc, tensor::ExtractOp::create(b, loc, t0),
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1));
  s.count = scalarTensor(b, loc, t);
  s.t64 =
      scalarTensor(b, loc, arith::SIToFPOp::create(b, loc, b.getF64Type(), t));
  s.write(op.getStepName(), s.count, t0);
  s.lr = op.getLearningRate() ? op.getLearningRate()
                              : a.c(op.getLr().convertToDouble());
  return s;
}

/// Counts a skipped step in `@<name>.skipped`.
void countSkip(Step &s, OptimizerOpInterface op) {
  if (!s.ok)
    return;
  OpBuilder &b = s.a.b;
  Location loc = s.a.loc;
  std::string counter = op.getSkippedName();
  Value old = s.a.get(counter, counterType(b.getContext()));
  Value skipped = arith::ExtUIOp::create(
      b, loc, b.getI64Type(),
      arith::XOrIOp::create(b, loc, isSet(b, loc, s.ok),
                            arith::ConstantIntOp::create(b, loc, 1, 1)));
  Value next = arith::AddIOp::create(
      b, loc, tensor::ExtractOp::create(b, loc, old), skipped);
  s.guards.own.insert(SetParamOp::create(
      b, loc, FlatSymbolRefAttr::get(b.getContext(), counter),
      scalarTensor(b, loc, next)));
}

/// The per-param updates, one overload per optimizer; `p` is the param's
/// name and `g` its (clipped) gradient.
void updateParam(SGDOp op, Step &s, unsigned, StringRef p, Value g) {
  Arith &a = s.a;
  double momentum = op.getMomentum().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
  Value w = s.param(p, g);
  Value d = decay != 0.0 ? a.add(g, a.mul(a.c(decay), w)) : g;
  if (momentum != 0.0) {
    std::string slot = op.getStateName(p, "momentum");
    Value old = a.get(slot, g.getType());
    Value buf = a.add(a.mul(a.c(momentum), old), d);
    s.write(slot, buf, old);
    d = op.getNesterov() ? a.add(d, a.mul(a.c(momentum), buf)) : buf;
  }
  s.writeParam(p, a.sub(w, a.mul(s.lr, d)), w);
}

void updateParam(AdamOp op, Step &s, unsigned, StringRef p, Value g) {
  Arith &a = s.a;
  double b1 = op.getBeta1().convertToDouble();
  double b2 = op.getBeta2().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
  Value old = s.param(p, g);
  Value w = old;
  if (decay != 0.0 && op.getDecoupled())
    w = a.mul(w, a.sub(a.c(1.0), a.mul(s.lr, a.c(decay))));
  else if (decay != 0.0)
    g = a.add(g, a.mul(a.c(decay), w));
  std::string mName = op.getStateName(p, "m"), vName = op.getStateName(p, "v");
  Value m0 = a.get(mName, g.getType()), v0 = a.get(vName, g.getType());
  Value m = a.add(a.mul(a.c(b1), m0), a.mul(a.c(1.0 - b1), g));
  Value v = a.add(a.mul(a.c(b2), v0), a.mul(a.c(1.0 - b2), a.mul(g, g)));
  s.write(mName, m, m0);
  s.write(vName, v, v0);
  Value stepSize = s.lrOverCorrection(b1);
  Value denom = a.add(a.mul(a.sqrt(v), s.inverseSqrtCorrection(b2)),
                      a.c(op.getEpsilon().convertToDouble()));
  s.writeParam(p, a.sub(w, a.mul(stepSize, a.div(m, denom))), old);
}

void updateParam(AdagradOp op, Step &s, unsigned, StringRef p, Value g) {
  Arith &a = s.a;
  double decay = op.getWeightDecay().convertToDouble();
  Value w = s.param(p, g);
  if (decay != 0.0)
    g = a.add(g, a.mul(a.c(decay), w));
  std::string slot = op.getStateName(p, "sum");
  Value sum0 = a.get(slot, g.getType());
  Value sum = a.add(sum0, a.mul(g, g));
  s.write(slot, sum, sum0);
  Value clr = s.lr;
  if (double lrDecay = op.getLrDecay().convertToDouble(); lrDecay != 0.0) {
    // 1 / (1 + (t - 1) lr_decay) in f64, as torch computes it.
    Arith d = s.f64();
    Value factor = d.div(
        d.c(1.0), d.add(d.c(1.0), d.mul(d.sub(s.t64, d.c(1.0)), d.c(lrDecay))));
    clr = a.mul(clr, s.narrow(factor));
  }
  Value std = a.add(a.sqrt(sum), a.c(op.getEpsilon().convertToDouble()));
  s.writeParam(p, a.sub(w, a.mul(clr, a.div(g, std))), w);
}

/// LAMB's and LANS's moments of (normalised) gradient `g`, written back;
/// returns the bias-corrected denominator √(v / (1 - β2^t)) + ε and m.
template <typename Op>
std::pair<Value, Value> adaptiveMoments(Op op, Step &s, StringRef p, Value g) {
  Arith &a = s.a;
  double b1 = op.getBeta1().convertToDouble();
  double b2 = op.getBeta2().convertToDouble();
  std::string mName = op.getStateName(p, "m"), vName = op.getStateName(p, "v");
  Value m0 = a.get(mName, g.getType()), v0 = a.get(vName, g.getType());
  Value m = a.add(a.mul(a.c(b1), m0), a.mul(a.c(1.0 - b1), g));
  Value v = a.add(a.mul(a.c(b2), v0), a.mul(a.c(1.0 - b2), a.mul(g, g)));
  s.write(mName, m, m0);
  s.write(vName, v, v0);
  Value denom = a.add(a.sqrt(a.mul(v, s.inverseCorrection(b2))),
                      a.c(op.getEpsilon().convertToDouble()));
  return {denom, m};
}

/// Param `i`'s group: its weight decay (`weight_decays`, else
/// `weight_decay`) and whether it takes the trust ratio (`trust_mask`,
/// else `byDefault`).
template <typename Op>
std::pair<double, bool> groupOf(Op op, unsigned i, bool byDefault) {
  double decay = op.getWeightDecays() ? (*op.getWeightDecays())[i]
                                      : op.getWeightDecay().convertToDouble();
  bool trust = op.getTrustMask() ? (*op.getTrustMask())[i] : byDefault;
  return {decay, trust};
}

void updateParam(LAMBOp op, Step &s, unsigned i, StringRef p, Value g) {
  Arith &a = s.a;
  // Apex applies the trust ratio only to decayed params unless nvlamb.
  auto [decay, masked] = groupOf(op, i, false);
  bool trust = op.getTrustMask() ? masked : decay != 0.0 || op.getNvlamb();
  Value w = s.param(p, g);
  auto [denom, m] = adaptiveMoments(op, s, p, g);
  Value u = a.div(
      a.mul(m, s.inverseCorrection(op.getBeta1().convertToDouble())), denom);
  if (decay != 0.0)
    u = a.add(u, a.mul(a.c(decay), w));
  Value ratio = s.lr;
  if (trust) {
    Value paramNorm = a.norm(w);
    ratio = s.trustRatio(paramNorm, a.norm(u));
  }
  s.writeParam(p, a.sub(w, a.mul(ratio, u)), w);
}

void updateParam(LANSOp op, Step &s, unsigned i, StringRef p, Value g) {
  Arith &a = s.a;
  double b1 = op.getBeta1().convertToDouble();
  auto [decay, trust] = groupOf(op, i, /*byDefault=*/true);
  double eps = op.getEpsilon().convertToDouble();
  Value w = s.param(p, g);
  Value gradNorm = a.norm(g), paramNorm = a.norm(w);
  g = a.select(a.step(gradNorm), a.div(g, a.add(gradNorm, a.c(eps))), g);
  auto [denom, m] = adaptiveMoments(op, s, p, g);
  Value um = a.div(a.mul(m, s.inverseCorrection(b1)), denom);
  Value ug = a.div(g, denom);
  if (decay != 0.0) {
    Value decayed = a.mul(a.c(decay), w);
    um = a.add(um, decayed);
    ug = a.add(ug, decayed);
  }
  Value rm = a.mul(a.c(b1), trust ? s.trustRatio(paramNorm, a.norm(um)) : s.lr);
  Value rg =
      a.mul(a.c(1.0 - b1), trust ? s.trustRatio(paramNorm, a.norm(ug)) : s.lr);
  s.writeParam(p, a.sub(a.sub(w, a.mul(rm, um)), a.mul(rg, ug)), w);
}

void updateParam(AdaAlterOp op, Step &s, unsigned, StringRef p, Value g) {
  Arith &a = s.a;
  double decay = op.getWeightDecay().convertToDouble();
  int64_t period = op.getPeriod();
  Value w = s.param(p, g);
  std::string accName = op.getStateName(p, "accumulator");
  Value acc0 = a.get(accName, g.getType());
  std::string denName = op.getStateName(p, "denominator");
  Value den0 = period == 1 ? acc0 : a.get(denName, g.getType());
  Value d =
      a.div(g, a.sqrt(a.add(den0, a.c(op.getEpsilon().convertToDouble()))));
  if (decay != 0.0)
    d = a.add(d, a.mul(a.c(decay), w));
  s.writeParam(p, a.sub(w, a.mul(s.lr, d)), w);
  Value acc = a.add(acc0, a.mul(g, g));
  s.write(accName, acc, acc0);
  if (period == 1)
    return;
  // The denominator catches up where u is a multiple of the period:
  // u - H ⌊u / H⌋ is exactly 0 there (t is exact in f64). u is t, or with
  // a warm-up of W steps max(t - W, 0), 0 during the warm-up (period 1)
  // and counting the period from its end.
  double h = double(period);
  Arith f = s.f64();
  Value u = s.t64;
  if (int64_t warmup = op.getSyncWarmupSteps())
    u = f.max(f.sub(u, f.c(double(warmup))), f.c(0.0));
  Value rest = f.sub(u, f.mul(f.c(h), f.floor(f.div(u, f.c(h)))));
  Value sync = s.narrow(f.step(f.sub(f.c(0.5), rest)));
  s.write(denName, a.select(sync, acc, den0), den0);
}

template <typename Op> struct ExpandOptimizer : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Step s = beginStep(op, rewriter, guards);
    for (auto [i, ref, g] : llvm::enumerate(op.getParams(), s.gradients))
      updateParam(op, s, unsigned(i), cast<FlatSymbolRefAttr>(ref).getValue(),
                  g);
    countSkip(s, op);
    if (s.ok)
      guards.oks[op->getParentOp()].push_back(s.ok);
    rewriter.eraseOp(op);
    return success();
  }
  SkipGuards &guards;
  ExpandOptimizer(MLIRContext *ctx, SkipGuards &guards)
      : OpRewritePattern<Op>(ctx), guards(guards) {}
};

//===----------------------------------------------------------------------===//
// Learning-rate schedules
//===----------------------------------------------------------------------===//

/// The elastic rate (GroveTrainingOps.td) from its state: on the first
/// call the ramp is done; on a change of world it restarts from the
/// effective world so far.
struct ExpandElasticLR : OpRewritePattern<ElasticLROp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ElasticLROp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Arith a{{rewriter, loc}, type.getElementType()};
    std::string prefix = op.getName().str();
    Value w = a.worldSize(type.getElementType());
    Value prev = a.get(prefix + ".world", type);
    Value from = a.get(prefix + ".from", type);
    Value steps = a.get(prefix + ".steps", type);
    double ramp = double(op.getRampSteps());
    auto progress = [&](Value s) {
      return ramp == 0 ? a.c(1.0) : a.min(a.div(s, a.c(ramp)), a.c(1.0));
    };
    auto effective = [&](Value start, Value end, Value s) {
      return a.add(start, a.mul(a.sub(end, start), progress(s)));
    };
    Value sofar = effective(from, prev, steps);
    Value first = a.sub(a.c(1.0), a.step(prev));
    Value changed = a.step(a.max(a.sub(w, prev), a.sub(prev, w)));
    Value start = a.select(first, w, a.select(changed, sofar, from));
    Value since =
        a.select(first, a.c(ramp), a.select(changed, a.c(0.0), steps));
    Value now = effective(start, w, since);
    a.set(prefix + ".world", w);
    a.set(prefix + ".from", start);
    a.set(prefix + ".steps", a.add(since, a.c(1.0)));
    rewriter.replaceOp(
        op, a.mul(op.getLr(), a.div(now, a.c(double(op.getBaseWorld())))));
    return success();
  }
};

struct ExpandLRSchedule : OpRewritePattern<LRScheduleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LRScheduleOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = op.getType().getElementType();
    Arith a{{rewriter, loc}, element};
    // The count in the rate's type (an i64 optimizer step, usually).
    Value t = op.getStep();
    Type stepType = cast<RankedTensorType>(t.getType()).getElementType();
    if (isa<IntegerType>(stepType))
      t = scalarTensor(
          rewriter, loc,
          arith::SIToFPOp::create(rewriter, loc, element,
                                  tensor::ExtractOp::create(rewriter, loc, t)));
    else if (stepType != element)
      t = ConvertOp::create(rewriter, loc, op.getType(), t);
    double lr = op.getLr().convertToDouble();
    double end = op.getEndLr().convertToDouble();
    double warmup = double(op.getWarmupSteps());
    double span = double(op.getTotalSteps()) - warmup;
    Value since = a.max(a.sub(t, a.c(warmup)), a.c(0.0));
    auto progress = [&] { return a.min(a.div(since, a.c(span)), a.c(1.0)); };
    auto towardsEnd = [&](Value fraction) {
      return a.add(a.c(end), a.mul(a.c(lr - end), fraction));
    };
    Value rate;
    switch (op.getKind()) {
    case ScheduleKind::Constant:
      rate = a.c(lr);
      break;
    case ScheduleKind::Polynomial:
      rate = towardsEnd(
          a.pow(a.sub(a.c(1.0), progress()), op.getPower().convertToDouble()));
      break;
    case ScheduleKind::Cosine: {
      Value angle = a.mul(a.c(M_PI), progress());
      Value cosine = CosOp::create(rewriter, op.getLoc(), angle);
      rate = towardsEnd(a.mul(a.c(0.5), a.add(a.c(1.0), cosine)));
      break;
    }
    case ScheduleKind::StepDecay: {
      Value k = a.floor(a.div(since, a.c(double(op.getStepSize()))));
      rate = a.mul(
          a.c(lr),
          a.exp(a.mul(k, a.c(std::log(op.getGamma().convertToDouble())))));
      break;
    }
    }
    if (warmup > 0.0) {
      Value warming = a.step(a.sub(a.c(warmup), t));
      rate = a.select(warming, a.mul(a.c(lr / warmup), t), rate);
    }
    rewriter.replaceOp(op, rate);
    return success();
  }
};

/// Each grove.elastic_lr's state: the last world, the ramp's start and the
/// calls since it started.
LogicalResult declareElasticState(ModuleOp module) {
  WalkResult result = module.walk([&](ElasticLROp op) {
    for (StringRef slot : {"world", "from", "steps"})
      if (failed(declareState(module, op, (op.getName() + "." + slot).str(),
                              op.getType(), 0.0)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult declareOptimizerState(ModuleOp module) {
  SmallVector<OptimizerOpInterface> optimizers;
  module.walk([&](OptimizerOpInterface op) { optimizers.push_back(op); });
  // Optimizers in one function sharing a name would share a step counter.
  llvm::DenseMap<std::pair<Operation *, StringRef>, Operation *> named;
  for (OptimizerOpInterface op : optimizers) {
    auto [it, fresh] = named.try_emplace({op->getParentOp(), op.getName()}, op);
    if (!fresh) {
      InFlightDiagnostic d = op->emitOpError("shares the state name '")
                             << op.getName()
                             << "' with another optimizer of this function; "
                                "give each its own `name`";
      d.attachNote(it->second->getLoc()) << "the other optimizer";
      return failure();
    }
  }
  for (OptimizerOpInterface op : optimizers) {
    RankedTensorType counter = counterType(module.getContext());
    if (failed(declareState(module, op, op.getStepName(), counter, 0.0)))
      return failure();
    if (op.getSkipNonfinite() &&
        failed(declareState(module, op, op.getSkippedName(), counter, 0.0)))
      return failure();
    for (auto [ref, g] : llvm::zip(op.getParams(), op.getGradients())) {
      StringRef name = cast<FlatSymbolRefAttr>(ref).getValue();
      auto type =
          cast<RankedTensorType>(g.getType()).clone(op.getElementType());
      if (op.getMasterWeights() &&
          failed(declareState(module, op, op.getStateName(name, "master"), type,
                              0.0)))
        return failure();
      for (StringRef slot : op.getStateSlots())
        if (failed(declareState(module, op, op.getStateName(name, slot), type,
                                op.getSlotInit(slot))))
          return failure();
    }
  }
  return success();
}

/// A max pool's gradient reads the winners the forward pool found: the
/// pool becomes max_pool2d_with_indices (one pass over each window for the
/// maximum and its place) and the gradient takes its indices, instead of
/// searching every window again in the backward.
void shareMaxPoolWinners(MaxPool2DGradOp grad, RewriterBase &rewriter) {
  if (grad.getIndices())
    return;
  // The pool of the same input and windows, before the gradient.
  auto sameWindows = [&](auto pool) {
    return pool->getBlock() == grad->getBlock() &&
           pool->isBeforeInBlock(grad) &&
           pool.getKernel() == grad.getKernel() &&
           pool.getStrides() == grad.getStrides() &&
           pool.getPadding() == grad.getPadding() &&
           pool.getCeilMode() == grad.getCeilMode() &&
           pool.getResult().getType().getShape() ==
               grad.getOutputGrad().getType().getShape();
  };
  Value indices;
  for (Operation *user : grad.getInput().getUsers()) {
    if (auto both = dyn_cast<MaxPool2DWithIndicesOp>(user);
        both && sameWindows(both)) {
      indices = both.getIndices();
      break;
    }
    auto pool = dyn_cast<MaxPool2DOp>(user);
    if (!pool || !sameWindows(pool))
      continue;
    rewriter.setInsertionPoint(pool);
    auto indicesType =
        RankedTensorType::get(pool.getType().getShape(), rewriter.getI32Type());
    auto both = MaxPool2DWithIndicesOp::create(
        rewriter, pool.getLoc(), TypeRange{pool.getType(), indicesType},
        pool.getInput(), pool.getKernelAttr(), pool.getStridesAttr(),
        pool.getPaddingAttr(), pool.getCeilModeAttr());
    rewriter.replaceOp(pool, both.getResult());
    indices = both.getIndices();
    break;
  }
  if (indices)
    rewriter.modifyOpInPlace(grad,
                             [&] { grad.getIndicesMutable().assign(indices); });
}

/// A skipped step changes no state but the skip counters and a dynamic
/// loss scale (grove-autocast): every other
/// state write of a function with a `skip_nonfinite` optimizer (batch
/// norm's running statistics, the collectives' residuals and counters, the
/// elastic rate's ramp) moves to the function's end, where the optimizers'
/// verdict is known, and keeps the old value where it is 0. Later reads of
/// the param in the function read the value written, as before.
LogicalResult guardStateWrites(func::FuncOp func, ArrayRef<Value> oks,
                               const llvm::DenseSet<Operation *> &own) {
  Block &body = func.getBody().front();
  Operation *end = body.getTerminator();
  OpBuilder b(end);
  Location loc = func.getLoc();
  Value ok = oks.front();
  Type okType = cast<RankedTensorType>(ok.getType()).getElementType();
  for (Value other : oks.drop_front()) {
    if (cast<RankedTensorType>(other.getType()).getElementType() != okType)
      other = ConvertOp::create(b, loc, ok.getType(), other);
    ok = MulOp::create(b, loc, ok, other);
  }
  SmallVector<SetParamOp> writes;
  // A dynamic loss scale must back off on the very steps that are skipped.
  for (auto w : body.getOps<SetParamOp>())
    if (!own.contains(w) && !w->hasAttr(kLossScaleUpdateAttr))
      writes.push_back(w);
  for (SetParamOp w : writes) {
    StringRef name = w.getName();
    bool superseded = false;
    for (Operation *next = w->getNextNode(); next && next != end;
         next = next->getNextNode()) {
      if (auto later = dyn_cast<SetParamOp>(next);
          later && later.getName() == name) {
        superseded = true;
        break;
      }
      if (auto read = dyn_cast<GetParamOp>(next);
          read && read.getName() == name)
        read.getResult().replaceAllUsesWith(w.getValue());
    }
    // A later write (the optimizer's, say) decides the final value; moving
    // this one past it would undo it.
    if (superseded) {
      w.erase();
      continue;
    }
    b.setInsertionPoint(w);
    Value old = GetParamOp::create(b, w.getLoc(), w.getValue().getType(),
                                   w.getNameAttr());
    b.setInsertionPoint(end);
    FailureOr<Value> kept = guarded(b, w.getLoc(), ok, w.getValue(), old);
    if (failed(kept))
      return w.emitOpError("writes integer state of rank above 0 in a "
                           "function whose optimizer skips non-finite steps");
    SetParamOp::create(b, w.getLoc(), w.getNameAttr(), *kept);
    w.erase();
  }
  return success();
}

/// Embedding ids that are an entry's argument are bounded by the table's
/// rows at the ABI, as labels are (not an unchecked lookup's).
void boundEmbeddingIds(ModuleOp module) {
  IRRewriter rewriter(module.getContext());
  module.walk([&](EmbeddingOp op) {
    if (!op.getUnchecked())
      boundIndices(op.getIds(), op.getTable().getType().getDimSize(0),
                   rewriter);
  });
}

struct GroveExpandTrainingOpsPass
    : grove::impl::GroveExpandTrainingOpsBase<GroveExpandTrainingOpsPass> {
  void runOnOperation() override {
    if (failed(declareOptimizerState(getOperation())) ||
        failed(declareElasticState(getOperation())) ||
        failed(declareGenerators(getOperation())))
      return signalPassFailure();
    boundEmbeddingIds(getOperation());
    SkipGuards guards;
    Draws draws;
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandSoftmaxCrossEntropy, ExpandMSELoss,
                 ExpandBatchNormTraining, ExpandLRSchedule, ExpandElasticLR>(
        &getContext());
    patterns.add<ExpandOptimizer<SGDOp>, ExpandOptimizer<AdamOp>,
                 ExpandOptimizer<AdagradOp>, ExpandOptimizer<LAMBOp>,
                 ExpandOptimizer<LANSOp>, ExpandOptimizer<AdaAlterOp>>(
        &getContext(), guards);
    patterns.add<ExpandDropout>(&getContext(), draws);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    advanceGenerators(draws);
    for (auto &[func, oks] : guards.oks)
      if (failed(guardStateWrites(cast<func::FuncOp>(func), oks, guards.own)))
        return signalPassFailure();
    // Not a pattern: it replaces an op before the one it looks at.
    SmallVector<MaxPool2DGradOp> grads;
    getOperation()->walk([&](MaxPool2DGradOp op) { grads.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (MaxPool2DGradOp grad : grads)
      shareMaxPoolWinners(grad, rewriter);
  }
};

} // namespace
