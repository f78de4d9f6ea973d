//===- LocalAdaAlter.cpp - Local steps, periodic averages -----------------===//
//
// grove.adaalter with period H > 1 (Local AdaAlter): every rank steps on
// its own gradients, and every H-th step the parameters and the
// accumulators are averaged across the ranks and the denominators restart
// from the averaged accumulators, as in the authors' reference trainer.
// With sync_warmup_steps W, the first W steps average the gradients
// instead (fully synchronous AdaAlter, the authors' --warmup-steps), and
// the period counts from step W, whose average makes sure the ranks
// start their local steps from one model.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

#include "grove/Dialect/Grove/Transforms/StateDecl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

/// The i64 count `t` (rank 0) compared with `value` by `predicate`.
Value compareCount(OpBuilder &b, Location loc, Value t,
                   arith::CmpIPredicate predicate, int64_t value) {
  Value v = tensor::ExtractOp::create(b, loc, t);
  return arith::CmpIOp::create(
      b, loc, predicate, v,
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), value));
}

/// During the warm-up (a count below W before the step) `opt`'s gradients
/// become their mean over the ranks, in buckets, so that every rank takes
/// the same fully synchronous step.
void averageWarmupGradients(AdaAlterOp opt, Type scalar,
                            const CollectiveConfig &config) {
  OpBuilder b(opt);
  Location loc = opt.getLoc();
  Value before = GetParamOp::create(
      b, loc, scalar,
      FlatSymbolRefAttr::get(opt->getContext(), opt.getStepName()));
  Value warm = compareCount(b, loc, before, arith::CmpIPredicate::slt,
                            opt.getSyncWarmupSteps());
  SmallVector<Value> grads(opt.getGradients().begin(),
                           opt.getGradients().end());
  SmallVector<Type> types;
  for (Value g : grads)
    types.push_back(g.getType());
  auto ifOp = scf::IfOp::create(b, loc, types, warm, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    CollectiveBuilder build{b, loc};
    scf::YieldOp::create(b, loc, build.meanBucketed(grads, config.bucketBytes));
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, grads);
  }
  unsigned first = opt.getGradients().getBeginOperandIndex();
  for (unsigned i = 0; i < grads.size(); ++i)
    opt->setOperand(first + i, ifOp.getResult(i));
}

class LocalAdaAlter : public SyncStrategy {
public:
  StringRef getName() const override { return "Local AdaAlter"; }
  bool appliesTo(OptimizerOpInterface opt,
                 const CollectiveConfig &) const override {
    auto adaalter = dyn_cast<AdaAlterOp>(opt.getOperation());
    return adaalter && adaalter.getPeriod() > 1;
  }
  LogicalResult apply(OptimizerOpInterface optimizer,
                      CollectiveState &state) const override;
};

LogicalResult LocalAdaAlter::apply(OptimizerOpInterface optimizer,
                                   CollectiveState &state) const {
  const CollectiveConfig &config = state.getConfig();
  auto opt = cast<AdaAlterOp>(optimizer.getOperation());
  if (opt.getSkipNonfinite())
    return opt.emitOpError(
        "with skip_nonfinite cannot take local steps: a rank that skips "
        "a step would count steps apart from the others and miss their "
        "synchronisation");
  if (opt.getMasterWeights())
    return opt.emitOpError(
        "with master_weights cannot take local steps: the averaging would "
        "reach the rounded params, not the master copies the next step "
        "reads");
  // Its averages are of params and accumulators, dense: a compressor or
  // error mode asked for would otherwise go unused without a word.
  if (!config.compressor->isDense() || config.candidates.size() > 1 ||
      config.error != CompressError::None)
    opt.emitWarning("Local AdaAlter (period ")
        << opt.getPeriod()
        << ") averages its params and accumulators uncompressed: the "
           "compressor and error options do not apply to it";
  ModuleOp module = state.getModule();
  OpBuilder b(opt->getContext());
  b.setInsertionPointAfter(opt);
  Location loc = opt.getLoc();
  SmallVector<Attribute> names(opt.getParams().begin(), opt.getParams().end());
  SmallVector<Attribute> accumulators, denominators;
  for (Attribute name : names) {
    StringRef param = cast<FlatSymbolRefAttr>(name).getValue();
    accumulators.push_back(FlatSymbolRefAttr::get(
        opt->getContext(), opt.getStateName(param, "accumulator")));
    denominators.push_back(FlatSymbolRefAttr::get(
        opt->getContext(), opt.getStateName(param, "denominator")));
  }
  // Declared here, as grove-expand-training-ops would, since this pass
  // reads it first.
  SmallVector<Value> params = readParams(b, loc, module, names);
  for (auto [i, p] : llvm::enumerate(params)) {
    auto type = cast<RankedTensorType>(p.getType());
    for (auto [slot, refs] :
         {std::pair{StringRef("accumulator"), &accumulators},
          std::pair{StringRef("denominator"), &denominators}})
      if (failed(declareState(module, opt,
                              cast<FlatSymbolRefAttr>((*refs)[i]).getValue(),
                              type, optimizer.getSlotInit(slot))))
        return failure();
  }
  // The optimizer's step count (grove-expand-training-ops: an i64).
  Type scalar = RankedTensorType::get({}, b.getI64Type());
  if (failed(declareState(module, opt, opt.getStepName(),
                          cast<RankedTensorType>(scalar), 0.0)))
    return failure();
  auto readLike = [&](ArrayRef<Attribute> refs) {
    SmallVector<Value> out;
    for (auto [ref, p] : llvm::zip(refs, params))
      out.push_back(GetParamOp::create(b, loc, p.getType(),
                                       cast<FlatSymbolRefAttr>(ref)));
    return out;
  };
  SmallVector<Value> acc = readLike(accumulators), den = readLike(denominators);
  Value t = GetParamOp::create(
      b, loc, scalar,
      FlatSymbolRefAttr::get(opt->getContext(), opt.getStepName()));
  CollectiveBuilder build{b, loc};
  int64_t warmup = opt.getSyncWarmupSteps();
  Value cond = build.isMultiple(t, -warmup, opt.getPeriod());
  if (warmup > 0) {
    averageWarmupGradients(opt, scalar, config);
    // The period counts from the warm-up's last step t = W, which averages
    // too: the ranks then agree even where they started apart or an
    // all-reduce's rounding differed between them.
    cond = arith::AndIOp::create(
        b, loc, cond,
        compareCount(b, loc, t, arith::CmpIPredicate::sge, warmup));
  }
  SmallVector<Type> types;
  for (Value v : llvm::concat<Value>(params, acc, den))
    types.push_back(v.getType());
  auto ifOp = scf::IfOp::create(b, loc, types, cond, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> all(params);
    all.append(acc);
    SmallVector<Value> means = build.meanBucketed(all, config.bucketBytes);
    SmallVector<Value> yielded(means);
    yielded.append(means.begin() + params.size(), means.end());
    scf::YieldOp::create(b, loc, yielded);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    SmallVector<Value> same(params);
    same.append(acc);
    same.append(den);
    scf::YieldOp::create(b, loc, same);
  }
  unsigned n = params.size();
  for (unsigned i = 0; i < n; ++i) {
    SetParamOp::create(b, loc, cast<FlatSymbolRefAttr>(names[i]),
                       ifOp.getResult(i));
    SetParamOp::create(b, loc, cast<FlatSymbolRefAttr>(accumulators[i]),
                       ifOp.getResult(n + i));
    SetParamOp::create(b, loc, cast<FlatSymbolRefAttr>(denominators[i]),
                       ifOp.getResult(2 * n + i));
  }
  return success();
}

} // namespace

std::unique_ptr<SyncStrategy> mlir::grove::createLocalAdaAlterStrategy() {
  return std::make_unique<LocalAdaAlter>();
}
