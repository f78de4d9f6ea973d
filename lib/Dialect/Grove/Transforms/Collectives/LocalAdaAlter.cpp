//===- LocalAdaAlter.cpp - Local steps, periodic averages -----------------===//
//
// grove.adaalter with period H > 1 (Local AdaAlter): every rank steps on
// its own gradients, and every H-th step the parameters and the
// accumulators are averaged across the ranks and the denominators restart
// from the averaged accumulators, as in the authors' reference trainer.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

#include "grove/Dialect/Grove/Transforms/StateDecl.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

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
  Value cond = build.isMultiple(t, 0, opt.getPeriod());
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
