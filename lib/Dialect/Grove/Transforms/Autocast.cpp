//===- Autocast.cpp - Mixed precision under an op policy ------------------===//
//
// The policy lives on the ops (the Autocast* traits of GroveBase.td), so a
// new op states its own rule where it is declared and this file never
// names an op. Casting happens before autodiff: the backward then
// differentiates the converts too, so every gradient reaches its f32 param
// in f32 and the optimizers keep master weights without knowing it.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveArith.h"
#include "grove/Dialect/Grove/IR/GroveAttrs.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"
#include "grove/Dialect/Grove/Transforms/StateDecl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEAUTOCAST
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// A float tensor's element type, or null.
FloatType floatElement(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type ? dyn_cast<FloatType>(type.getElementType()) : FloatType();
}

RankedTensorType withElement(Value v, Type element) {
  return cast<RankedTensorType>(v.getType()).clone(element);
}

/// Rewrites one function's ops under a policy. `original` remembers the
/// type each retyped value was written with.
class Caster {
public:
  explicit Caster(FloatType compute) : compute(compute) {}

  void run(func::FuncOp func) {
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == func.getOperation() || isa<ValueAndGradOp>(op))
        return WalkResult::advance();
      if (isa<ConvertOp>(op))
        return WalkResult::advance();
      if (op->getNumRegions() != 0) {
        restore(op);
        restoreCaptured(op);
        return WalkResult::skip();
      }
      if (op->hasTrait<AutocastLow>())
        lower(op);
      else if (op->hasTrait<AutocastWide>())
        widen(op);
      else if (op->hasTrait<AutocastFollow>())
        follow(op);
      else
        restore(op);
      return WalkResult::advance();
    });
  }

private:
  /// What an op's operands and results were before a retyping, to undo it.
  struct Undo {
    SmallVector<std::pair<OpOperand *, Value>> operands;
    SmallVector<std::pair<OpResult, Type>> results;
  };

  /// Converts `use`'s value to `element` before its owner.
  void castOperand(OpOperand &use, Type element, Undo *undo = nullptr) {
    Value v = use.get();
    if (floatElement(v) == element)
      return;
    OpBuilder b(use.getOwner());
    Value converted = ConvertOp::create(b, use.getOwner()->getLoc(),
                                        withElement(v, element), v);
    if (undo)
      undo->operands.push_back({&use, v});
    use.set(converted);
  }

  void retypeResults(Operation *op, FloatType from, FloatType to, Undo &undo) {
    for (OpResult r : op->getResults())
      if (floatElement(r) == from) {
        undo.results.push_back({r, r.getType()});
        r.setType(withElement(r, to));
      }
  }

  /// Keeps the retyping if the op's verifier accepts it, else undoes it.
  void verifyOrUndo(Operation *op, Undo &undo) {
    {
      ScopedDiagnosticHandler silence(op->getContext(),
                                      [](Diagnostic &) { return success(); });
      if (succeeded(mlir::verify(op, /*verifyRecursively=*/false))) {
        for (auto [r, type] : undo.results)
          original.try_emplace(r, type);
        return;
      }
    }
    for (auto [r, type] : undo.results)
      r.setType(type);
    for (auto [use, v] : undo.operands) {
      Operation *converted = use->get().getDefiningOp();
      use->set(v);
      if (converted->use_empty())
        converted->erase();
    }
  }

  /// In the compute type: its f32 operands narrowed, its f32 results too.
  void lower(Operation *op) {
    Undo undo;
    bool narrowed = false;
    for (OpOperand &use : op->getOpOperands()) {
      FloatType element = floatElement(use.get());
      if (element && element.isF32())
        castOperand(use, compute, &undo);
      narrowed |= element == compute || (element && element.isF32());
    }
    if (!narrowed)
      return;
    retypeResults(op, Float32Type::get(op->getContext()), compute, undo);
    verifyOrUndo(op, undo);
  }

  /// In f32: what this pass narrowed goes back to its type.
  void widen(Operation *op) { restore(op); }

  /// In the widest type of its float operands.
  void follow(Operation *op) {
    FloatType widest;
    bool anyNarrowed = false;
    for (Value v : op->getOperands()) {
      FloatType element = floatElement(v);
      if (!element)
        continue;
      anyNarrowed |= original.contains(v);
      if (!widest || element.getWidth() > widest.getWidth())
        widest = element;
      else if (element != widest && element.getWidth() == widest.getWidth())
        widest = Float32Type::get(op->getContext()); // bf16 with f16
    }
    if (!anyNarrowed)
      return;
    Undo undo;
    for (OpOperand &use : op->getOpOperands())
      if (floatElement(use.get()))
        castOperand(use, widest, &undo);
    if (widest.getWidth() < 32)
      retypeResults(op, Float32Type::get(op->getContext()), widest, undo);
    verifyOrUndo(op, undo);
  }

  /// The values a region op's body reads from above, back in the types they
  /// were written with, converted before the op (the body is not cast).
  void restoreCaptured(Operation *op) {
    visitUsedValuesDefinedAbove(op->getRegions(), [&](OpOperand *use) {
      auto it = original.find(use->get());
      if (it == original.end())
        return;
      OpBuilder b(op);
      use->set(ConvertOp::create(b, op->getLoc(), it->second, use->get()));
    });
  }

  /// Every value this pass retyped back to the type it was written with.
  void restore(Operation *op) {
    for (OpOperand &use : op->getOpOperands()) {
      auto it = original.find(use.get());
      if (it != original.end() && it->second != use.get().getType())
        castOperand(use, cast<RankedTensorType>(it->second).getElementType());
    }
  }

  FloatType compute;
  llvm::DenseMap<Value, Type> original;
};

/// A rank-0 tensor of the scalar `v`.
Value scalarTensor(OpBuilder &b, Location loc, Value v) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, v.getType()), v);
}

/// The dynamic loss scale of one grove.value_and_grad, named `prefix`.
class LossScaler {
public:
  LossScaler(ValueAndGradOp op, std::string prefix, int64_t growthInterval)
      : op(op), prefix(std::move(prefix)), growthInterval(growthInterval) {}

  LogicalResult declare(ModuleOp module, int64_t init) {
    MLIRContext *ctx = module.getContext();
    // The scaled value and gradients must hold what f16 cannot: the scale
    // itself overflows f16, and an unscaled f16 gradient underflows again
    // (GradScaler refuses to unscale f16 gradients for the same reason).
    for (Value r : op->getResults())
      if (!floatElement(r).isF32())
        return op.emitOpError("needs an f32 value and f32 gradients for "
                              "dynamic loss scaling (f32 params, the master "
                              "weights), got ")
               << r.getType();
    return success(
        succeeded(declareState(module, op, scaleName(), scalarType(ctx),
                               double(init))) &&
        succeeded(declareState(
            module, op, goodName(),
            RankedTensorType::get({}, IntegerType::get(ctx, 64)), 0.0)));
  }

  void build() {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value scale = GetParamOp::create(b, loc, scalarType(b.getContext()),
                                     symbol(b, scaleName()));
    scaleValue(b, scale);
    b.setInsertionPointAfter(op);
    Value ok = unscale(b, scale);
    update(b, scale, ok);
  }

private:
  std::string scaleName() const { return prefix + ".scale"; }
  std::string goodName() const { return prefix + ".good_steps"; }
  static RankedTensorType scalarType(MLIRContext *ctx) {
    return RankedTensorType::get({}, Float32Type::get(ctx));
  }
  static FlatSymbolRefAttr symbol(OpBuilder &b, StringRef name) {
    return FlatSymbolRefAttr::get(b.getContext(), name);
  }
  /// The body yields value · scale: the backward starts from it.
  void scaleValue(OpBuilder &b, Value scale) {
    YieldOp yield = op.getYield();
    b.setInsertionPoint(yield);
    Value v = yield.getValues()[0];
    yield->setOperand(0, MulOp::create(b, yield.getLoc(), v, scale));
    b.setInsertionPoint(op);
  }

  /// Divides the value and the gradients by the scale where they are used;
  /// returns 1 where every gradient is finite, else 0 (rank-0 f32).
  Value unscale(OpBuilder &b, Value scale) {
    Location loc = op.getLoc();
    GroveArith a{b, loc};
    Value poison;
    for (Value r : op->getResults()) {
      Value divided = a.div(r, scale);
      r.replaceAllUsesExcept(divided, divided.getDefiningOp());
      if (r == op.getValue())
        continue;
      // g · 0 is NaN exactly where g is NaN or infinite.
      auto type = cast<RankedTensorType>(r.getType());
      auto axes = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      Value zero = a.mul(r, a.scalar(r, 0.0));
      Value sum = axes.empty() ? zero : ReduceSumOp::create(b, loc, zero, axes);
      poison = poison ? a.add(poison, sum) : sum;
    }
    if (!poison)
      return a.scalar(scale, 1.0);
    return a.step(a.add(poison, a.scalar(scale, 1.0)));
  }

  /// GradScaler's rule: a non-finite step halves the scale and restarts
  /// the count; `growthInterval` finite ones in a row double it.
  void update(OpBuilder &b, Value scale, Value ok) {
    Location loc = op.getLoc();
    GroveArith a{b, loc};
    Type i64 = b.getI64Type();
    Value good0 = GetParamOp::create(b, loc, RankedTensorType::get({}, i64),
                                     symbol(b, goodName()));
    Value good =
        arith::AddIOp::create(b, loc, tensor::ExtractOp::create(b, loc, good0),
                              arith::ConstantIntOp::create(b, loc, i64, 1));
    Value finite = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OGT,
        tensor::ExtractOp::create(b, loc, ok),
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0)));
    Value full = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge, good,
        arith::ConstantIntOp::create(b, loc, i64, growthInterval));
    Value grow = arith::AndIOp::create(b, loc, finite, full);
    Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
    Value nextGood = arith::SelectOp::create(
        b, loc, finite, arith::SelectOp::create(b, loc, grow, zero, good),
        zero);
    Value growF = scalarTensor(
        b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), grow));
    Value kept = SelectOp::create(b, loc, growF,
                                  a.mul(scale, a.scalar(scale, 2.0)), scale);
    Value next =
        SelectOp::create(b, loc, ok, kept, a.mul(scale, a.scalar(scale, 0.5)));
    for (auto [name, value] : {std::pair<std::string, Value>{scaleName(), next},
                               {goodName(), scalarTensor(b, loc, nextGood)}}) {
      auto write = SetParamOp::create(b, loc, symbol(b, name), value);
      write->setAttr(kLossScaleUpdateAttr, b.getUnitAttr());
    }
  }

  ValueAndGradOp op;
  std::string prefix;
  int64_t growthInterval;
};

struct GroveAutocastPass
    : mlir::grove::impl::GroveAutocastBase<GroveAutocastPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<AutocastAttr> fallback = optionPolicy();
    if (failed(fallback))
      return signalPassFailure();
    if (auto own = module->getAttrOfType<AutocastAttr>(kAutocastAttr))
      *fallback = own;
    unsigned gradients = 0;
    module.walk([&](ValueAndGradOp) { ++gradients; });
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      auto policy = func->getAttrOfType<AutocastAttr>(kAutocastAttr);
      if (!policy)
        policy = *fallback;
      if (!policy || func.isDeclaration())
        continue;
      Caster(policy.getCompute()).run(func);
      if (policy.getInitialLossScale() > 0 &&
          failed(scaleLosses(module, func, policy, gradients == 1)))
        return signalPassFailure();
    }
    // Applied: a second run must not cast or scale again.
    module->removeAttr(kAutocastAttr);
    for (auto func : module.getOps<func::FuncOp>())
      func->removeAttr(kAutocastAttr);
  }

  /// The pass options' policy, null without `compute`.
  FailureOr<AutocastAttr> optionPolicy() {
    MLIRContext *ctx = &getContext();
    if (compute.empty())
      return AutocastAttr();
    FloatType type;
    if (compute == "bf16")
      type = BFloat16Type::get(ctx);
    else if (compute == "f16")
      type = Float16Type::get(ctx);
    if (!type) {
      getOperation().emitError("grove-autocast: compute must be bf16 or f16, "
                               "got '")
          << compute << "'";
      return failure();
    }
    if (lossScale < -1 || growthInterval < 1) {
      getOperation().emitError("grove-autocast: loss-scale must be -1, 0 or "
                               "positive and growth-interval at least 1");
      return failure();
    }
    return AutocastAttr::get(ctx, type, int64_t(lossScale),
                             int64_t(growthInterval));
  }

  LogicalResult scaleLosses(ModuleOp module, func::FuncOp func,
                            AutocastAttr policy, bool alone) {
    SmallVector<ValueAndGradOp> ops;
    func.walk([&](ValueAndGradOp op) { ops.push_back(op); });
    for (auto [i, op] : llvm::enumerate(ops)) {
      // One scale a model usually; else one a function (and a gradient).
      std::string prefix =
          alone ? "loss_scale" : (func.getSymName() + ".loss_scale").str();
      if (i)
        prefix += "_" + std::to_string(i);
      LossScaler scaler(op, prefix, policy.getGrowthInterval());
      if (failed(scaler.declare(module, policy.getInitialLossScale())))
        return failure();
      scaler.build();
    }
    // A step whose scaled gradients overflowed changes no param.
    if (!ops.empty())
      func.walk([&](OptimizerOpInterface opt) {
        opt->setAttr("skip_nonfinite", UnitAttr::get(func.getContext()));
      });
    return success();
  }
};

} // namespace
