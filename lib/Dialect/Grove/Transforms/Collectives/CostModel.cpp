//===- CostModel.cpp - How much to compress a bucket ---------------------===//

#include "CostModel.h"

#include "Compressor.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace mlir::grove;

namespace {

double elements(Type type, int64_t batchSize) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped)
    return 0;
  double n = 1;
  for (int64_t d : shaped.getShape())
    n *= ShapedType::isDynamic(d) ? double(batchSize) : double(d);
  return n;
}

double dimSize(Value v, int64_t d, int64_t batchSize) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t size = type.getDimSize(d < 0 ? type.getRank() + d : d);
  return ShapedType::isDynamic(size) ? double(batchSize) : double(size);
}

} // namespace

double mlir::grove::estimateFlops(Operation *op, int64_t batchSize) {
  if (op->getNumResults() == 0)
    return 0;
  double out = elements(op->getResult(0).getType(), batchSize);
  if (auto mm = dyn_cast<MatmulOp>(op))
    return 2 * out *
           dimSize(mm.getLhs(), mm.getTransposeLhs() ? -2 : -1, batchSize);
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    // weight: F x C/g x Kh x Kw.
    auto w = cast<RankedTensorType>(conv.getWeight().getType());
    return 2 * out *
           double(w.getDimSize(1) * w.getDimSize(2) * w.getDimSize(3));
  }
  if (auto grad = dyn_cast<Conv2DWeightGradOp>(op)) {
    // result F x C/g x Kh x Kw; each term over the batch and output image.
    auto dy = cast<RankedTensorType>(grad.getOutputGrad().getType());
    double image = dimSize(grad.getOutputGrad(), 0, batchSize) *
                   double(dy.getDimSize(2) * dy.getDimSize(3));
    return 2 * out * image;
  }
  double in = 0;
  for (Value v : op->getOperands())
    in = std::max(in, elements(v.getType(), batchSize));
  return std::max(in, out);
}

double mlir::grove::collectiveSeconds(const Compressor &compressor,
                                      int64_t ratio, int64_t bytes,
                                      const NetworkModel &net,
                                      int64_t elementBytes) {
  double n = double(net.worldSize), bandwidth = net.gbps * 1e9 / 8;
  double latency = net.latencyUs * 1e-6;
  double size = double(bytes);
  auto ring = [&](double message, int messages) {
    return 2 * (n - 1) / n * message / bandwidth +
           messages * 2 * (n - 1) * latency;
  };
  auto gather = [&](double message, int messages) {
    return (n - 1) * message / bandwidth + messages * (n - 1) * latency;
  };
  if (ratio == 1)
    return ring(size, 1);
  WireCost wire = compressor.getWireCost(bytes, ratio);
  double seconds = 0;
  if (wire.codecOpsPerElement > 0) {
    assert(net.computeGflops > 0 && "the encoding needs a compute rate");
    seconds = wire.codecOpsPerElement * size / double(elementBytes) /
              (net.computeGflops * 1e9);
  }
  if (wire.allReduces)
    seconds += ring(wire.allReduceBytes, wire.allReduces);
  if (wire.allGathers)
    seconds += gather(wire.allGatherBytes, wire.allGathers);
  return seconds;
}

RatioChoice mlir::grove::chooseRatio(ArrayRef<const Compressor *> candidates,
                                     int64_t bytes, double overlapSeconds,
                                     const NetworkModel &net,
                                     int64_t elementBytes) {
  assert(!candidates.empty() && "no compressor to choose from");
  struct Rung {
    const Compressor *compressor;
    int64_t ratio;
    double seconds;
  };
  const Compressor *first = candidates.front();
  SmallVector<Rung> ladder = {
      {first, 1, collectiveSeconds(*first, 1, bytes, net, elementBytes)}};
  for (const Compressor *c : candidates)
    if (c->savesBytes(elementBytes))
      for (int64_t r : c->getAutoRatios())
        ladder.push_back(
            {c, r, collectiveSeconds(*c, r, bytes, net, elementBytes)});
  llvm::stable_sort(
      ladder, [](const Rung &a, const Rung &b) { return a.ratio < b.ratio; });
  double fastest = ladder.front().seconds;
  for (const Rung &rung : ladder)
    fastest = std::min(fastest, rung.seconds);
  // When nothing hides behind the backward, within 10% of the fastest is as
  // good, and less compression loses less (a latency-bound bucket gains
  // nothing from compressing).
  double budget = std::max(overlapSeconds, 1.1 * fastest);
  RatioChoice choice;
  choice.overlapSeconds = overlapSeconds;
  choice.denseSeconds = ladder.front().seconds;
  for (const Rung &rung : ladder) {
    choice.compressor = rung.compressor;
    choice.ratio = rung.ratio;
    choice.seconds = rung.seconds;
    if (choice.seconds <= budget)
      break;
  }
  return choice;
}
