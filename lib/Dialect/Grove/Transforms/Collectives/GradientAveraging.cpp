//===- GradientAveraging.cpp - Average the gradients before the step -----===//
//
// The default strategy (DDP's): the gradients are grouped, in the order
// the backward computes them, into buckets of one element type up to
// bucket-bytes; each bucket's collective goes right after its last
// gradient, so that it can overlap the rest of the backward
// (grove-overlap-collectives). The configured compressor sends each
// bucket; with error=feedback what it did not send is kept in a residual
// (state) and added to the next step's bucket.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

#include "grove/Dialect/Grove/IR/GroveArith.h"
#include "grove/Dialect/Grove/Transforms/StateDecl.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::grove;

namespace {

/// The residual error feedback keeps: `next` (e minus what was sent). With
/// skip_nonfinite a non-finite gradient on this rank (in `e`) would stay
/// in the residual and skip every later step, so the previous residual
/// `r` is kept instead; the step itself is skipped or, where the
/// compressor sent none of the non-finite elements, taken without them.
Value nextResidual(OpBuilder &b, Location loc, OptimizerOpInterface opt,
                   Value e, Value r, Value next) {
  if (!opt.getSkipNonfinite())
    return next;
  GroveArith a{b, loc};
  // e * 0 is NaN exactly where e is NaN or infinite; step(1 + NaN) is 0.
  Value poison = ReduceSumOp::create(b, loc, a.mul(e, a.scalar(e, 0.0)),
                                     ArrayRef<int64_t>{0});
  Value ok = a.step(a.add(poison, a.scalar(poison, 1.0)));
  return SelectOp::create(b, loc, ok, next, r);
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", seconds * 1e3);
  return text;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// ratio=auto: the compressor and ratio the cost model picks for `bucket`
/// (of `gradients`), whose collective goes after `last` (null: the start),
/// reported as a remark at the optimizer `op`.
RatioChoice chooseBucketRatio(const CollectiveConfig &config, unsigned index,
                              ArrayRef<Value> gradients,
                              ArrayRef<unsigned> bucket, Operation *last,
                              Operation *op) {
  int64_t bytes = 0;
  for (unsigned i : bucket)
    bytes += numElements(gradients[i]) * elementBytes(gradients[i]);
  // The backward left after the bucket is ready, up to the optimizer.
  double flops = 0;
  for (Operation *next = last ? last->getNextNode() : &op->getBlock()->front();
       next && next != op; next = next->getNextNode())
    flops += estimateFlops(next, config.network.batchSize);
  double overlap = flops / (config.network.computeGflops * 1e9);
  RatioChoice choice =
      chooseRatio(config.candidates, bytes, overlap, config.network,
                  elementBytes(gradients[bucket.front()]));
  InFlightDiagnostic remark = op->emitRemark();
  remark << "grove-insert-collectives: bucket " << index << " ("
         << bucket.size() << " gradients, " << bytes << " bytes, "
         << config.network.worldSize << " ranks at "
         << number(config.network.gbps) << " Gbps): " << milliseconds(overlap)
         << " of backward to overlap; dense all-reduce "
         << milliseconds(choice.denseSeconds) << "; ";
  if (choice.ratio == 1)
    remark << "sends it dense";
  else
    remark << "sends " << choice.compressor->getName() << " 1/" << choice.ratio
           << " in " << milliseconds(choice.seconds)
           << (choice.seconds > overlap ? " (none fits in the backward: "
                                          "within 10% of the fastest)"
                                        : "");
  return choice;
}

/// The optimizer's gradients in the order the backward computes them
/// (arguments and constants first), with the ops that compute them.
struct Ordered {
  SmallVector<unsigned> order;
  SmallVector<Value> gradients;
  SmallVector<Operation *> positions;
};

Ordered orderByReadiness(OptimizerOpInterface opt) {
  Block *block = opt->getBlock();
  Ordered o;
  auto position = [&](unsigned i) -> Operation * {
    Operation *def = opt.getGradients()[i].getDefiningOp();
    return def ? block->findAncestorOpInBlock(*def) : nullptr;
  };
  for (unsigned i = 0; i < opt.getGradients().size(); ++i)
    o.order.push_back(i);
  llvm::stable_sort(o.order, [&](unsigned a, unsigned b) {
    Operation *pa = position(a), *pb = position(b);
    if (!pa || !pb)
      return pa == nullptr && pb != nullptr;
    return pa->isBeforeInBlock(pb);
  });
  for (unsigned i : o.order) {
    o.gradients.push_back(opt.getGradients()[i]);
    o.positions.push_back(position(i));
  }
  return o;
}

/// The average `bucket` (flat, of `types`/`sizes`) gets from `how`'s
/// compressor at its ratio, with error feedback's residual where
/// configured.
FailureOr<Value> averageBucket(CollectiveBuilder &build, CollectiveState &state,
                               OptimizerOpInterface opt, Value flat,
                               ArrayRef<Type> types, ArrayRef<int64_t> sizes,
                               RatioChoice how, Value counter) {
  const CollectiveConfig &config = state.getConfig();
  // A bucket the cost model leaves dense sends all of e: it needs no
  // residual (e - e = 0), nor the state and arithmetic of one.
  if (how.compressor->isDense() || how.ratio == 1)
    return build.mean(flat);
  OpBuilder &b = build.b;
  Location loc = build.loc;
  Operation *op = opt.getOperation();
  unsigned stream = state.takeStreams(1);
  std::string residualName;
  Value e = flat, r;
  if (config.error == CompressError::Feedback) {
    residualName = ("collectives.bucket" + Twine(stream) + ".residual").str();
    auto type = cast<RankedTensorType>(flat.getType());
    if (failed(declareState(state.getModule(), op, residualName, type, 0.0)))
      return failure();
    r = GetParamOp::create(
        b, loc, type, FlatSymbolRefAttr::get(b.getContext(), residualName));
    e = AddOp::create(b, loc, flat, r);
  }
  Bucket bucket{e, types, sizes, how.ratio, stream, counter, op};
  FailureOr<Compressed> c =
      how.compressor->compress(build, config, state.getModule(), bucket);
  if (failed(c))
    return failure();
  if (!residualName.empty())
    SetParamOp::create(
        b, loc, FlatSymbolRefAttr::get(b.getContext(), residualName),
        nextResidual(b, loc, opt, e, r, SubOp::create(b, loc, e, c->local)));
  return c->averaged;
}

class GradientAveraging : public SyncStrategy {
public:
  StringRef getName() const override { return "gradient averaging"; }
  bool appliesTo(OptimizerOpInterface,
                 const CollectiveConfig &) const override {
    return true;
  }
  LogicalResult apply(OptimizerOpInterface opt,
                      CollectiveState &state) const override;
};

LogicalResult GradientAveraging::apply(OptimizerOpInterface opt,
                                       CollectiveState &state) const {
  const CollectiveConfig &config = state.getConfig();
  Operation *op = opt.getOperation();
  Ordered ordered = orderByReadiness(opt);
  Value counter;
  if (llvm::any_of(config.candidates,
                   [](const Compressor *c) { return c->needsStepCounter(); })) {
    FailureOr<Value> t =
        state.counterOf(op->getParentOfType<func::FuncOp>(), op);
    if (failed(t))
      return failure();
    counter = *t;
  }
  SmallVector<Value> averaged(ordered.gradients.size());
  OpBuilder b(op);
  unsigned bucketIndex = 0;
  for (const SmallVector<unsigned> &bucket :
       bucketize(ordered.gradients, config.bucketBytes)) {
    Operation *last = nullptr;
    for (unsigned i : bucket)
      if (Operation *p = ordered.positions[i])
        last = !last || last->isBeforeInBlock(p) ? p : last;
    // Gradients that are arguments or constants are ready at the start,
    // after the counter (read first in the function).
    if (last)
      b.setInsertionPointAfter(last);
    else if (counter)
      b.setInsertionPointAfter(counter.getDefiningOp());
    else
      b.setInsertionPointToStart(op->getBlock());
    RatioChoice how;
    how.compressor = config.compressor;
    how.ratio = config.ratio;
    if (config.autoRatio)
      how = chooseBucketRatio(config, bucketIndex, ordered.gradients, bucket,
                              last, op);
    ++bucketIndex;
    CollectiveBuilder build{b, op->getLoc()};
    SmallVector<Value> flats;
    SmallVector<Type> types;
    SmallVector<int64_t> sizes;
    for (unsigned i : bucket) {
      flats.push_back(build.flatten(ordered.gradients[i]));
      types.push_back(ordered.gradients[i].getType());
      sizes.push_back(numElements(ordered.gradients[i]));
    }
    FailureOr<Value> sent = averageBucket(
        build, state, opt, build.concat(flats), types, sizes, how, counter);
    if (failed(sent))
      return failure();
    for (auto [i, piece] : llvm::zip(bucket, build.split(*sent, sizes)))
      averaged[i] = build.reshapeLike(piece, ordered.gradients[i].getType());
  }
  for (auto [i, v] : llvm::enumerate(averaged))
    op->setOperand(opt.getGradients().getBeginOperandIndex() + ordered.order[i],
                   v);
  return success();
}

} // namespace

std::unique_ptr<SyncStrategy> mlir::grove::createGradientAveragingStrategy() {
  return std::make_unique<GradientAveraging>();
}
