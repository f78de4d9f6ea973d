//===- GroveCollectiveOps.cpp - Verifiers of the collective ops
//------------===//
//
// grove.all_gather's stacked result and grove.random_block's draw
// (GroveCollectiveOps.td). The other collectives keep their operand's type.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

using namespace mlir;
using namespace mlir::grove;

LogicalResult AllGatherOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (input.getElementType() != result.getElementType())
    return emitOpError("result element type ")
           << result.getElementType() << " differs from the input's "
           << input.getElementType();
  if (result.getRank() != input.getRank() + 1 ||
      result.getShape().drop_front() != input.getShape())
    return emitOpError("result must be the input's shape ")
           << input << " after a leading world-size dimension, got " << result;
  if (!result.isDynamicDim(0) && result.getDimSize(0) < 1)
    return emitOpError("world-size dimension must be dynamic or positive");
  return success();
}

LogicalResult RandomBlockOp::verify() {
  // I64Attr's getters are unsigned: read them as written.
  auto extent = static_cast<int64_t>(getExtent()),
       block = static_cast<int64_t>(getBlock()),
       stream = static_cast<int64_t>(getStream());
  if (block < 1 || extent < block)
    return emitOpError("expects 1 <= block <= extent, got block ")
           << block << " of extent " << extent;
  if (stream < 0 || stream > 0xffffffff)
    return emitOpError("stream must be a 32-bit count, got ") << stream;
  return success();
}
