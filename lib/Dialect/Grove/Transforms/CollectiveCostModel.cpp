//===- CollectiveCostModel.cpp - How much to compress a bucket -----------===//

#include "CollectiveCostModel.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

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

/// Seconds per element the encoding costs on the host (coarse: a selection
/// for top-k, a pass for casts and signs; a block slice is free).
double codecSecondsPerElement(Compressor kind) {
  switch (kind) {
  case Compressor::TopK:
    return 5e-9;
  case Compressor::FP16:
  case Compressor::BF16:
  case Compressor::Sign:
  case Compressor::RandK:
    return 1e-9;
  case Compressor::PowerSGD:
    return 4e-9;
  case Compressor::None:
  case Compressor::GRBS:
    return 0;
  }
  return 0;
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

double mlir::grove::collectiveSeconds(Compressor kind, int64_t ratio,
                                      int64_t bytes, const NetworkModel &net) {
  double n = double(net.worldSize), bandwidth = net.gbps * 1e9 / 8;
  double latency = net.latencyUs * 1e-6;
  double size = double(bytes);
  auto ring = [&](double message) {
    return 2 * (n - 1) / n * message / bandwidth + 2 * (n - 1) * latency;
  };
  auto gather = [&](double message, int messages) {
    return (n - 1) * message / bandwidth + messages * (n - 1) * latency;
  };
  double codec = codecSecondsPerElement(kind) * size / 4;
  if (ratio == 1)
    return ring(size);
  switch (kind) {
  case Compressor::None:
    return ring(size);
  case Compressor::FP16:
  case Compressor::BF16:
    return ring(size / 2) + codec;
  case Compressor::GRBS:
  case Compressor::RandK:
    return ring(size / double(ratio)) + codec;
  case Compressor::TopK:
    // Values and indices, 4 bytes each, gathered from every rank.
    return gather(2 * size / double(ratio), 2) + codec;
  case Compressor::Sign:
    return gather(size / 32 + 4, 2) + codec;
  case Compressor::PowerSGD:
    // Its factors' size depends on the shapes; the pass gives it as
    // bytes / ratio: two all-reduces.
    return ring(size / double(ratio)) + 2 * (n - 1) * latency + codec;
  }
  return ring(size);
}

RatioChoice mlir::grove::chooseRatio(Compressor kind, int64_t bytes,
                                     double overlapSeconds,
                                     const NetworkModel &net) {
  SmallVector<int64_t> candidates = {1};
  switch (kind) {
  case Compressor::None:
    break;
  case Compressor::FP16:
  case Compressor::BF16:
    candidates.push_back(2);
    break;
  case Compressor::Sign:
    candidates.push_back(32);
    break;
  case Compressor::PowerSGD:
    break;
  case Compressor::GRBS:
  case Compressor::RandK:
  case Compressor::TopK:
    for (int64_t c = 2; c <= 256; c *= 2)
      candidates.push_back(c);
    break;
  }
  double fastest = collectiveSeconds(kind, 1, bytes, net);
  for (int64_t c : candidates)
    fastest = std::min(fastest, collectiveSeconds(kind, c, bytes, net));
  // When nothing hides behind the backward, within 10% of the fastest is as
  // good, and less compression loses less (a latency-bound bucket gains
  // nothing from compressing).
  double budget = std::max(overlapSeconds, 1.1 * fastest);
  RatioChoice choice;
  choice.overlapSeconds = overlapSeconds;
  choice.denseSeconds = collectiveSeconds(kind, 1, bytes, net);
  for (int64_t c : candidates) {
    choice.ratio = c;
    choice.seconds = collectiveSeconds(kind, c, bytes, net);
    if (choice.seconds <= budget)
      break;
  }
  return choice;
}
