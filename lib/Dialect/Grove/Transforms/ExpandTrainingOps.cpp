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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cmath>

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEEXPANDTRAININGOPS
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// Labels that are a function's argument get `grove.below` = the class
/// count (the smallest, if several losses read them), so that the runtime
/// rejects a label out of range before the entry writes any state.
void boundLabels(SoftmaxCrossEntropyOp op, PatternRewriter &rewriter) {
  auto arg = dyn_cast<BlockArgument>(op.getLabels());
  auto func =
      arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
  if (!func || arg.getOwner() != &func.getBody().front())
    return;
  int64_t classes = op.getLogits().getType().getDimSize(1);
  if (ShapedType::isDynamic(classes) || classes < 1)
    return;
  unsigned i = arg.getArgNumber();
  if (auto old = func.getArgAttrOfType<IntegerAttr>(i, kBelowAttr))
    classes = std::min(classes, old.getInt());
  rewriter.modifyOpInPlace(func, [&] {
    func.setArgAttr(i, kBelowAttr, rewriter.getI64IntegerAttr(classes));
  });
}

/// -mean_n sum_c target[n, c] log_softmax(logits)[n, c].
struct ExpandSoftmaxCrossEntropy : OpRewritePattern<SoftmaxCrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    boundLabels(op, rewriter);
    Value logits = op.getLogits();
    RankedTensorType type = op.getLogits().getType();
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
    Value d = SubOp::create(rewriter, loc, op.getPrediction(), op.getTarget());
    int64_t rank = op.getPrediction().getType().getRank();
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

/// One optimizer step as its expansion builds it: the gradients after
/// clipping, whether they are finite (`ok`, a rank-0 1 or 0, with
/// `skip_nonfinite`), the new step count t and the learning rate.
struct Step {
  Arith a;
  SmallVector<Value> gradients;
  Value ok;
  Value t;
  Value lr;
  /// 1 - beta^t by beta: one per step, whatever the number of params.
  SmallVector<std::pair<double, Value>, 2> corrections;

  /// Writes `updated` to state `name`, or keeps `old` where the step is
  /// skipped.
  void write(StringRef name, Value updated, Value old) {
    a.set(name, ok ? a.select(ok, updated, old) : updated);
  }
  /// 1 - beta^t, as exp(t log beta).
  Value correction(double beta) {
    for (auto [known, c] : corrections)
      if (known == beta)
        return c;
    Value c = a.sub(a.c(1.0), a.exp(a.mul(t, a.c(std::log(beta)))));
    corrections.push_back({beta, c});
    return c;
  }
  /// 1 / (1 - beta^t), or its square root: per-element loops multiply by
  /// these scalars instead of dividing by the corrections (a division is
  /// several times a multiply's cost in the update loops; the result
  /// differs by rounding only).
  Value inverseCorrection(double beta) {
    return a.div(a.c(1.0), correction(beta));
  }
  Value inverseSqrtCorrection(double beta) {
    return a.div(a.c(1.0), a.sqrt(correction(beta)));
  }
  /// lr · ‖p‖ / ‖u‖ where both norms are non-zero, else lr: the trust
  /// ratio of LAMB and LANS.
  Value trustRatio(Value paramNorm, Value updateNorm) {
    Value paramNonZero = a.step(paramNorm);
    Value both = a.mul(paramNonZero, a.step(updateNorm));
    return a.select(both, a.mul(lr, a.div(paramNorm, updateNorm)), lr);
  }
};

/// What every optimizer does first: with `skip_nonfinite`, `ok` says
/// whether the gradients are all finite; with a `max_grad_norm`, they are
/// scaled by min(1, max_norm / (global norm + 1e-6)), as
/// torch.nn.utils.clip_grad_norm_ does; the step counter advances (unless
/// skipped).
Step beginStep(OptimizerOpInterface op, OpBuilder &b) {
  Step s{Arith{{b, op.getLoc()}, op.getElementType()},
         llvm::to_vector(op.getGradients()),
         Value(),
         Value(),
         Value(),
         {}};
  Arith &a = s.a;
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
  Type scalar = RankedTensorType::get({}, a.element);
  Value t0 = a.get(op.getStepName(), scalar);
  s.t = a.add(t0, a.c(1.0));
  s.write(op.getStepName(), s.t, t0);
  s.lr = op.getLearningRate() ? op.getLearningRate()
                              : a.c(op.getLr().convertToDouble());
  return s;
}

/// Counts a skipped step in `@<name>.skipped`.
void countSkip(Step &s, OptimizerOpInterface op) {
  if (!s.ok)
    return;
  std::string counter = op.getSkippedName();
  Type scalar = RankedTensorType::get({}, s.a.element);
  s.a.set(counter,
          s.a.add(s.a.get(counter, scalar), s.a.sub(s.a.c(1.0), s.ok)));
}

/// The per-param updates, one overload per optimizer; `p` is the param's
/// name and `g` its (clipped) gradient.
void updateParam(SGDOp op, Step &s, StringRef p, Value g) {
  Arith &a = s.a;
  double momentum = op.getMomentum().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
  Value w = a.get(p, g.getType());
  Value d = decay != 0.0 ? a.add(g, a.mul(a.c(decay), w)) : g;
  if (momentum != 0.0) {
    std::string slot = op.getStateName(p, "momentum");
    Value old = a.get(slot, g.getType());
    Value buf = a.add(a.mul(a.c(momentum), old), d);
    s.write(slot, buf, old);
    d = op.getNesterov() ? a.add(d, a.mul(a.c(momentum), buf)) : buf;
  }
  s.write(p, a.sub(w, a.mul(s.lr, d)), w);
}

void updateParam(AdamOp op, Step &s, StringRef p, Value g) {
  Arith &a = s.a;
  double b1 = op.getBeta1().convertToDouble();
  double b2 = op.getBeta2().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
  Value old = a.get(p, g.getType());
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
  Value stepSize = a.div(s.lr, s.correction(b1));
  Value denom = a.add(a.mul(a.sqrt(v), s.inverseSqrtCorrection(b2)),
                      a.c(op.getEpsilon().convertToDouble()));
  s.write(p, a.sub(w, a.mul(stepSize, a.div(m, denom))), old);
}

void updateParam(AdagradOp op, Step &s, StringRef p, Value g) {
  Arith &a = s.a;
  double decay = op.getWeightDecay().convertToDouble();
  Value w = a.get(p, g.getType());
  if (decay != 0.0)
    g = a.add(g, a.mul(a.c(decay), w));
  std::string slot = op.getStateName(p, "sum");
  Value sum0 = a.get(slot, g.getType());
  Value sum = a.add(sum0, a.mul(g, g));
  s.write(slot, sum, sum0);
  Value clr = s.lr;
  if (double lrDecay = op.getLrDecay().convertToDouble(); lrDecay != 0.0)
    clr =
        a.div(clr, a.add(a.c(1.0), a.mul(a.sub(s.t, a.c(1.0)), a.c(lrDecay))));
  Value std = a.add(a.sqrt(sum), a.c(op.getEpsilon().convertToDouble()));
  s.write(p, a.sub(w, a.mul(clr, a.div(g, std))), w);
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

void updateParam(LAMBOp op, Step &s, StringRef p, Value g) {
  Arith &a = s.a;
  double decay = op.getWeightDecay().convertToDouble();
  Value w = a.get(p, g.getType());
  auto [denom, m] = adaptiveMoments(op, s, p, g);
  Value u = a.div(
      a.mul(m, s.inverseCorrection(op.getBeta1().convertToDouble())), denom);
  if (decay != 0.0)
    u = a.add(u, a.mul(a.c(decay), w));
  // Apex applies the trust ratio only to decayed params unless nvlamb.
  Value ratio = s.lr;
  if (decay != 0.0 || op.getNvlamb()) {
    Value paramNorm = a.norm(w);
    ratio = s.trustRatio(paramNorm, a.norm(u));
  }
  s.write(p, a.sub(w, a.mul(ratio, u)), w);
}

void updateParam(LANSOp op, Step &s, StringRef p, Value g) {
  Arith &a = s.a;
  double b1 = op.getBeta1().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
  double eps = op.getEpsilon().convertToDouble();
  Value w = a.get(p, g.getType());
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
  Value rm = a.mul(a.c(b1), s.trustRatio(paramNorm, a.norm(um)));
  Value rg = a.mul(a.c(1.0 - b1), s.trustRatio(paramNorm, a.norm(ug)));
  s.write(p, a.sub(a.sub(w, a.mul(rm, um)), a.mul(rg, ug)), w);
}

void updateParam(AdaAlterOp op, Step &s, StringRef p, Value g) {
  Arith &a = s.a;
  double decay = op.getWeightDecay().convertToDouble();
  int64_t period = op.getPeriod();
  Value w = a.get(p, g.getType());
  std::string accName = op.getStateName(p, "accumulator");
  Value acc0 = a.get(accName, g.getType());
  std::string denName = op.getStateName(p, "denominator");
  Value den0 = period == 1 ? acc0 : a.get(denName, g.getType());
  Value d =
      a.div(g, a.sqrt(a.add(den0, a.c(op.getEpsilon().convertToDouble()))));
  if (decay != 0.0)
    d = a.add(d, a.mul(a.c(decay), w));
  s.write(p, a.sub(w, a.mul(s.lr, d)), w);
  Value acc = a.add(acc0, a.mul(g, g));
  s.write(accName, acc, acc0);
  if (period == 1)
    return;
  // The denominator catches up where t is a multiple of the period:
  // t - H ⌊t / H⌋ is exactly 0 there (t counts in a float).
  double h = double(period);
  Value rest = a.sub(s.t, a.mul(a.c(h), a.floor(a.div(s.t, a.c(h)))));
  Value sync = a.step(a.sub(a.c(0.5), rest));
  s.write(denName, a.select(sync, acc, den0), den0);
}

template <typename Op> struct ExpandOptimizer : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Step s = beginStep(op, rewriter);
    for (auto [ref, g] : llvm::zip(op.getParams(), s.gradients))
      updateParam(op, s, cast<FlatSymbolRefAttr>(ref).getValue(), g);
    countSkip(s, op);
    rewriter.eraseOp(op);
    return success();
  }
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
    Arith a{{rewriter, op.getLoc()}, op.getType().getElementType()};
    Value t = op.getStep();
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
    auto scalar = RankedTensorType::get({}, op.getElementType());
    if (failed(declareState(module, op, op.getStepName(), scalar, 0.0)))
      return failure();
    if (op.getSkipNonfinite() &&
        failed(declareState(module, op, op.getSkippedName(), scalar, 0.0)))
      return failure();
    for (auto [ref, g] : llvm::zip(op.getParams(), op.getGradients())) {
      StringRef name = cast<FlatSymbolRefAttr>(ref).getValue();
      auto type = cast<RankedTensorType>(g.getType());
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

struct GroveExpandTrainingOpsPass
    : grove::impl::GroveExpandTrainingOpsBase<GroveExpandTrainingOpsPass> {
  void runOnOperation() override {
    if (failed(declareOptimizerState(getOperation())) ||
        failed(declareElasticState(getOperation())))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandSoftmaxCrossEntropy, ExpandMSELoss,
                 ExpandBatchNormTraining, ExpandLRSchedule, ExpandElasticLR,
                 ExpandOptimizer<SGDOp>, ExpandOptimizer<AdamOp>,
                 ExpandOptimizer<AdagradOp>, ExpandOptimizer<LAMBOp>,
                 ExpandOptimizer<LANSOp>, ExpandOptimizer<AdaAlterOp>>(
        &getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    // Not a pattern: it replaces an op before the one it looks at.
    SmallVector<MaxPool2DGradOp> grads;
    getOperation()->walk([&](MaxPool2DGradOp op) { grads.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (MaxPool2DGradOp grad : grads)
      shareMaxPoolWinners(grad, rewriter);
  }
};

} // namespace
