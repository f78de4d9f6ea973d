//===- ExpandTrainingOps.cpp - Losses into primitive grove ops ------------===//
//
// Losses stay whole through grove-autodiff, whose VJPs use their closed
// forms (cheaper and more accurate than differentiating the expansion),
// then become the primitive ops every target already lowers. Optimizers
// become reads, elementwise updates and writes of their state, which this
// pass declares first (zero-initialised) where the module does not.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveArith.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

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

/// -mean_n sum_c target[n, c] log_softmax(logits)[n, c].
struct ExpandSoftmaxCrossEntropy : OpRewritePattern<SoftmaxCrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxCrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
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

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// Element-wise arithmetic on tensors and rank-0 constants of one element
/// type, as the optimizers' formulas read.
struct Arith : GroveArith {
  Type element;

  Value c(double v) { return scalarOf(element, v); }
  Value get(StringRef name, Type type) {
    return GetParamOp::create(b, loc, type,
                              FlatSymbolRefAttr::get(b.getContext(), name));
  }
  void set(StringRef name, Value v) {
    SetParamOp::create(b, loc, FlatSymbolRefAttr::get(b.getContext(), name), v);
  }
};

/// The learning rate: the operand, else the attribute.
template <typename Op> Value learningRate(Op op, Arith &a) {
  return op.getLearningRate() ? op.getLearningRate()
                              : a.c(op.getLr().convertToDouble());
}

Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// What every optimizer does to its gradients first: with
/// `skip_nonfinite`, `ok` (a rank-0 1 or 0) says whether they are all
/// finite; with a `max_grad_norm`, they are scaled by min(1, max_norm /
/// (global norm + 1e-6)), as torch.nn.utils.clip_grad_norm_ does.
struct Gradients {
  SmallVector<Value> values;
  Value ok;
};

template <typename Op> Gradients prepareGradients(Op op, Arith &a) {
  Gradients out{llvm::to_vector(op.getGradients()), Value()};
  auto sumAll = [&](Value t) -> Value {
    int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
    return ReduceSumOp::create(a.b, a.loc, t,
                               llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  };
  if (op.getSkipNonfinite()) {
    // g * 0 is NaN exactly where g is NaN or infinite; step(1 + NaN) is 0.
    Value poison;
    for (Value g : out.values) {
      Value s = sumAll(a.mul(g, a.c(0.0)));
      poison = poison ? a.add(poison, s) : s;
    }
    out.ok = StepOp::create(a.b, a.loc, a.add(poison, a.c(1.0)));
  }
  double maxNorm = op.getMaxGradNorm().convertToDouble();
  if (maxNorm > 0.0) {
    Value squares;
    for (Value g : out.values) {
      Value s = sumAll(a.mul(g, g));
      squares = squares ? a.add(squares, s) : s;
    }
    Value coef = a.div(a.c(maxNorm), a.add(a.sqrt(squares), a.c(1e-6)));
    Value scale = MinOp::create(a.b, a.loc, coef, a.c(1.0));
    for (Value &g : out.values)
      g = a.mul(g, scale);
  }
  return out;
}

/// Writes `updated` to state `name`, or keeps `old` where the step is
/// skipped.
void write(Arith &a, const Gradients &grads, StringRef name, Value updated,
           Value old) {
  a.set(name,
        grads.ok
            ? SelectOp::create(a.b, a.loc, grads.ok, updated, old).getResult()
            : updated);
}

/// Counts a skipped step in `@<name>.skipped`.
void countSkip(Arith &a, const Gradients &grads, StringRef name) {
  if (!grads.ok)
    return;
  std::string counter = (name + ".skipped").str();
  Type scalar = RankedTensorType::get({}, a.element);
  a.set(counter, a.add(a.get(counter, scalar), a.sub(a.c(1.0), grads.ok)));
}

struct ExpandSGD : OpRewritePattern<SGDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SGDOp op,
                                PatternRewriter &rewriter) const override {
    double momentum = op.getMomentum().convertToDouble();
    double decay = op.getWeightDecay().convertToDouble();
    Arith a{{rewriter, op.getLoc()}, elementOf(op.getGradients()[0])};
    Gradients grads = prepareGradients(op, a);
    Value lr = learningRate(op, a);
    for (auto [ref, g] : llvm::zip(op.getParams(), grads.values)) {
      StringRef name = cast<FlatSymbolRefAttr>(ref).getValue();
      Value p = a.get(name, g.getType());
      Value d = decay != 0.0 ? a.add(g, a.mul(a.c(decay), p)) : g;
      if (momentum != 0.0) {
        std::string slot = op.getStateName(name, "momentum");
        Value old = a.get(slot, g.getType());
        Value buf = a.add(a.mul(a.c(momentum), old), d);
        write(a, grads, slot, buf, old);
        d = op.getNesterov() ? a.add(d, a.mul(a.c(momentum), buf)) : buf;
      }
      write(a, grads, name, a.sub(p, a.mul(lr, d)), p);
    }
    countSkip(a, grads, op.getName());
    rewriter.eraseOp(op);
    return success();
  }
};

struct ExpandAdam : OpRewritePattern<AdamOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AdamOp op,
                                PatternRewriter &rewriter) const override {
    double b1 = op.getBeta1().convertToDouble();
    double b2 = op.getBeta2().convertToDouble();
    double decay = op.getWeightDecay().convertToDouble();
    Arith a{{rewriter, op.getLoc()}, elementOf(op.getGradients()[0])};
    Gradients grads = prepareGradients(op, a);
    Type scalar = RankedTensorType::get({}, a.element);
    Value t0 = a.get(op.getStepName(), scalar);
    Value t = a.add(t0, a.c(1.0));
    write(a, grads, op.getStepName(), t, t0);
    // 1 - beta^t as exp(t log beta).
    auto correction = [&](double beta) {
      return a.sub(a.c(1.0), a.exp(a.mul(t, a.c(std::log(beta)))));
    };
    Value lr = learningRate(op, a);
    Value stepSize = a.div(lr, correction(b1));
    Value rootCorrection2 = a.sqrt(correction(b2));
    for (auto [ref, g] : llvm::zip(op.getParams(), grads.values)) {
      StringRef name = cast<FlatSymbolRefAttr>(ref).getValue();
      Value old = a.get(name, g.getType());
      Value p = old;
      if (decay != 0.0 && op.getDecoupled())
        p = a.mul(p, a.sub(a.c(1.0), a.mul(lr, a.c(decay))));
      else if (decay != 0.0)
        g = a.add(g, a.mul(a.c(decay), p));
      std::string mName = op.getStateName(name, "m");
      std::string vName = op.getStateName(name, "v");
      Value m0 = a.get(mName, g.getType()), v0 = a.get(vName, g.getType());
      Value m = a.add(a.mul(a.c(b1), m0), a.mul(a.c(1.0 - b1), g));
      Value v = a.add(a.mul(a.c(b2), v0), a.mul(a.c(1.0 - b2), a.mul(g, g)));
      write(a, grads, mName, m, m0);
      write(a, grads, vName, v, v0);
      Value denom = a.add(a.div(a.sqrt(v), rootCorrection2),
                          a.c(op.getEpsilon().convertToDouble()));
      write(a, grads, name, a.sub(p, a.mul(stepSize, a.div(m, denom))), old);
    }
    countSkip(a, grads, op.getName());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Declares `name` as zero-initialised state of `type` unless the module
/// does; a declaration of another type is an error.
LogicalResult declareState(ModuleOp module, Operation *user, StringRef name,
                           RankedTensorType type) {
  if (auto existing = module.lookupSymbol<ParamOp>(name)) {
    if (existing.getTensorType() != type)
      return user->emitOpError("needs state @")
             << name << " of type " << type << ", declared as "
             << existing.getTensorType();
    return success();
  }
  if (module.lookupSymbol(name))
    return user->emitOpError("needs state @")
           << name << ", a name the module uses for something else";
  // After the last declared param, so the descriptor lists state after the
  // weights it belongs to.
  OpBuilder b(module.getContext());
  ParamOp last;
  for (ParamOp p : module.getOps<ParamOp>())
    last = p;
  if (last)
    b.setInsertionPointAfter(last);
  else
    b.setInsertionPointToStart(module.getBody());
  Type element = type.getElementType();
  ParamOp::create(b, user->getLoc(), name, type, b.getFloatAttr(element, 0.0));
  return success();
}

LogicalResult declareOptimizerState(ModuleOp module) {
  SmallVector<Operation *> optimizers;
  module.walk([&](Operation *op) {
    if (isa<SGDOp, AdamOp>(op))
      optimizers.push_back(op);
  });
  // Optimizers in one function sharing a name would share a step counter.
  llvm::DenseMap<std::pair<Operation *, StringRef>, Operation *> named;
  for (Operation *op : optimizers) {
    StringRef name =
        isa<SGDOp>(op) ? cast<SGDOp>(op).getName() : cast<AdamOp>(op).getName();
    auto [it, fresh] = named.try_emplace({op->getParentOp(), name}, op);
    if (!fresh) {
      InFlightDiagnostic d = op->emitOpError("shares the state name '")
                             << name
                             << "' with another optimizer of this function; "
                                "give each its own `name`";
      d.attachNote(it->second->getLoc()) << "the other optimizer";
      return failure();
    }
  }
  for (Operation *op : optimizers) {
    auto paramType = [&](Value gradient) {
      return cast<RankedTensorType>(gradient.getType());
    };
    Type element =
        paramType(isa<SGDOp>(op) ? cast<SGDOp>(op).getGradients()[0]
                                 : cast<AdamOp>(op).getGradients()[0])
            .getElementType();
    bool skips = isa<SGDOp>(op) ? cast<SGDOp>(op).getSkipNonfinite()
                                : cast<AdamOp>(op).getSkipNonfinite();
    StringRef prefix =
        isa<SGDOp>(op) ? cast<SGDOp>(op).getName() : cast<AdamOp>(op).getName();
    if (skips && failed(declareState(module, op, (prefix + ".skipped").str(),
                                     RankedTensorType::get({}, element))))
      return failure();
    if (auto sgd = dyn_cast<SGDOp>(op)) {
      if (sgd.getMomentum().isZero())
        continue;
      for (auto [ref, g] : llvm::zip(sgd.getParams(), sgd.getGradients()))
        if (failed(declareState(
                module, op,
                sgd.getStateName(cast<FlatSymbolRefAttr>(ref).getValue(),
                                 "momentum"),
                paramType(g))))
          return failure();
      continue;
    }
    auto adam = cast<AdamOp>(op);
    if (failed(declareState(module, op, adam.getStepName(),
                            RankedTensorType::get({}, element))))
      return failure();
    for (auto [ref, g] : llvm::zip(adam.getParams(), adam.getGradients())) {
      StringRef name = cast<FlatSymbolRefAttr>(ref).getValue();
      for (StringRef slot : {"m", "v"})
        if (failed(declareState(module, op, adam.getStateName(name, slot),
                                paramType(g))))
          return failure();
    }
  }
  return success();
}

struct GroveExpandTrainingOpsPass
    : grove::impl::GroveExpandTrainingOpsBase<GroveExpandTrainingOpsPass> {
  void runOnOperation() override {
    if (failed(declareOptimizerState(getOperation())))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns
        .add<ExpandSoftmaxCrossEntropy, ExpandMSELoss, ExpandSGD, ExpandAdam>(
            &getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
