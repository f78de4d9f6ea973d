//===- CostModel.h - How much to compress a bucket --------------*- C++ -*-===//
//
// The network cost model of grove-insert-collectives' ratio=auto
// (docs/distributed.md; after "Is Network the Bottleneck of Distributed
// Training?", 2020): a bucket's collective should take no longer than the
// backward computation left to overlap it, so each bucket gets the least
// compression (none included) of the candidate compressors that fits, from
// a ring all-reduce's
// 2(n-1)/n S/B or an all-gather's (n-1) S/B plus per-hop latencies and a
// coarse encoding cost. Each compressor says what it sends (WireCost);
// this file says what that costs.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_TRANSFORMS_COLLECTIVES_COSTMODEL_H
#define GROVE_DIALECT_GROVE_TRANSFORMS_COLLECTIVES_COSTMODEL_H

#include "mlir/IR/Operation.h"

#include <cstdint>

namespace mlir::grove {

class Compressor;

/// What one bucket's compressed collective puts on the wire: bytes through
/// ring all-reduces and how many there are, bytes each rank contributes to
/// all-gathers and how many, and the encoding's cost in operations per
/// f32 element of the bucket (coarse: a selection for top-k, a pass for
/// casts and signs; a block slice is free). The encoding runs on the cores
/// that run the backward, so it takes the compute rate's time: on a
/// machine shared by several ranks it costs as much more as the backward
/// does.
struct WireCost {
  double allReduceBytes = 0;
  int allReduces = 0;
  double allGatherBytes = 0;
  int allGathers = 0;
  double codecOpsPerElement = 0;
};

/// What the model knows of the job: the link, the ranks, the compute rate
/// the backward runs at, and the batch a dynamic dimension stands for.
struct NetworkModel {
  double gbps = 0;
  double latencyUs = 0;
  int64_t worldSize = 0;
  double computeGflops = 0;
  int64_t batchSize = 0;
};

/// A bucket's choice: its compressor and ratio (ratio 1: none, the dense
/// all-reduce, whatever the compressor), the time its collective takes so
/// and densely, and the time to overlap.
struct RatioChoice {
  const Compressor *compressor = nullptr;
  int64_t ratio = 1;
  double seconds = 0, denseSeconds = 0, overlapSeconds = 0;
};

/// Floating-point operations of `op` (matmuls, convolutions; elementwise
/// and reductions one per element), a dynamic size counted as
/// `batchSize`.
double estimateFlops(Operation *op, int64_t batchSize);

/// Seconds the collective of a bucket of `bytes` (elements of
/// `elementBytes`) takes compressed by `compressor` at `ratio` (1: the
/// dense all-reduce). `net.computeGflops` must be positive.
double collectiveSeconds(const Compressor &compressor, int64_t ratio,
                         int64_t bytes, const NetworkModel &net,
                         int64_t elementBytes = 4);

/// The least compression whose collective fits in `overlapSeconds`, or
/// the least within 10% of the fastest when none does. The ladder is
/// dense, then each of `candidates`' auto ratios that saves bytes on
/// elements of `elementBytes` (a 16-bit cast of 16-bit gradients does
/// not), ordered by ratio; at equal ratios the list's order decides.
/// `candidates` is not empty.
RatioChoice chooseRatio(ArrayRef<const Compressor *> candidates, int64_t bytes,
                        double overlapSeconds, const NetworkModel &net,
                        int64_t elementBytes = 4);

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_COLLECTIVES_COSTMODEL_H
