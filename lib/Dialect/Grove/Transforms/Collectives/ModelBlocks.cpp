//===- ModelBlocks.cpp - CSER: local steps, model blocks averaged ---------===//
//
// error=reset (CSER): every rank takes its optimizer step on its own
// gradients, then one random block of 1/ratio of each parameter is
// averaged across the ranks (the same block everywhere, from the step
// count); every sync-period-th step a block of 1/period-ratio instead
// (the reference's C2 replacing C1). What a rank's parameters differ by
// from the others' is the error that the averages reset.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

/// Each of `params` with one random block of 1/ratio of it replaced by
/// the block's average over the ranks (streams firstStream on).
SmallVector<Value> averageBlocks(CollectiveBuilder &build,
                                 ArrayRef<Value> params, Value counter,
                                 int64_t ratio, unsigned firstStream,
                                 const CollectiveConfig &config) {
  SmallVector<Value> flats, offsets, blocks;
  for (auto [i, p] : llvm::enumerate(params)) {
    Value flat = build.flatten(p);
    int64_t size = numElements(p);
    int64_t k = blockSize(size, ratio);
    Value offset = RandomBlockOp::create(build.b, build.loc, counter,
                                         config.seed, firstStream + i, size, k);
    flats.push_back(flat);
    offsets.push_back(offset);
    blocks.push_back(build.extractBlock(flat, offset, k));
  }
  SmallVector<Value> means = build.meanBucketed(blocks, config.bucketBytes);
  SmallVector<Value> out;
  for (auto [p, flat, offset, m] : llvm::zip(params, flats, offsets, means))
    out.push_back(
        build.reshapeLike(build.insertBlock(m, flat, offset), p.getType()));
  return out;
}

class ModelBlocks : public SyncStrategy {
public:
  StringRef getName() const override { return "model blocks (CSER)"; }
  bool appliesTo(OptimizerOpInterface,
                 const CollectiveConfig &config) const override {
    return config.error == CompressError::Reset;
  }
  LogicalResult apply(OptimizerOpInterface opt,
                      CollectiveState &state) const override;
};

LogicalResult ModelBlocks::apply(OptimizerOpInterface opt,
                                 CollectiveState &state) const {
  const CollectiveConfig &config = state.getConfig();
  Operation *op = opt.getOperation();
  FailureOr<Value> counter =
      state.counterOf(op->getParentOfType<func::FuncOp>(), op);
  if (failed(counter))
    return failure();
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Location loc = op->getLoc();
  SmallVector<Attribute> names(opt.getParams().begin(), opt.getParams().end());
  SmallVector<Value> params = readParams(b, loc, state.getModule(), names);
  CollectiveBuilder build{b, loc};
  unsigned streams = state.takeStreams(params.size());
  SmallVector<Value> synced;
  if (config.syncPeriod == 1) {
    synced =
        averageBlocks(build, params, *counter, config.ratio, streams, config);
  } else {
    // C2 replaces C1 on every H-th step (the reference's trainer).
    Value cond = build.isMultiple(*counter, 1, config.syncPeriod);
    SmallVector<Type> types;
    for (Value p : params)
      types.push_back(p.getType());
    auto ifOp = scf::IfOp::create(b, loc, types, cond, /*withElse=*/true);
    for (auto [region, ratio] :
         {std::pair{&ifOp.getThenRegion(), config.periodRatio},
          std::pair{&ifOp.getElseRegion(), config.ratio}}) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&region->front());
      SmallVector<Value> values =
          averageBlocks(build, params, *counter, ratio, streams, config);
      scf::YieldOp::create(b, loc, values);
    }
    synced.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  }
  for (auto [name, v] : llvm::zip(names, synced))
    SetParamOp::create(b, loc, cast<FlatSymbolRefAttr>(name), v);
  return success();
}

} // namespace

std::unique_ptr<SyncStrategy> mlir::grove::createModelBlocksStrategy() {
  return std::make_unique<ModelBlocks>();
}
