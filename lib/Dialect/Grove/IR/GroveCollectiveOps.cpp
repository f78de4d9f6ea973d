//===- GroveCollectiveOps.cpp - Verifiers of the collective ops -----------===//
//
// grove.all_gather's stacked result, the pairing of a started collective
// with its wait, and grove.random_block's draw (GroveCollectiveOps.td). The
// other collectives keep their operand's type.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::grove;

/// A start's request goes to exactly one wait, in the start's block, and
/// its input has a static shape (the wait's buffer is allocated after the
/// start is bufferized).
static LogicalResult verifyStart(Operation *op, Value input, Value request) {
  if (!request.hasOneUse() ||
      !isa<CollectiveWaitOp>(*request.getUsers().begin()))
    return op->emitOpError("request must be used by exactly one "
                           "grove.collective_wait");
  if (request.getUsers().begin()->getBlock() != op->getBlock())
    return op->emitOpError("request must be waited for in its own block");
  if (!cast<RankedTensorType>(input.getType()).hasStaticShape())
    return op->emitOpError("input must have a static shape, got ")
           << input.getType();
  return success();
}

LogicalResult AllReduceStartOp::verify() {
  return verifyStart(*this, getInput(), getRequest());
}

LogicalResult AllGatherStartOp::verify() {
  return verifyStart(*this, getInput(), getRequest());
}

/// `result` is `input` gathered from every rank: its shape after a leading
/// world-size dimension, dynamic or positive.
static LogicalResult verifyGathered(Operation *op, RankedTensorType input,
                                    RankedTensorType result) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError("result element type ")
           << result.getElementType() << " differs from the input's "
           << input.getElementType();
  if (result.getRank() != input.getRank() + 1 ||
      result.getShape().drop_front() != input.getShape())
    return op->emitOpError("result must be the input's shape ")
           << input << " after a leading world-size dimension, got " << result;
  if (!result.isDynamicDim(0) && result.getDimSize(0) < 1)
    return op->emitOpError("world-size dimension must be dynamic or positive");
  return success();
}

LogicalResult CollectiveWaitOp::verify() {
  Operation *start = getStart();
  if (!start)
    return emitOpError("request must come from a grove.all_reduce_start or "
                       "grove.all_gather_start");
  auto input = cast<RankedTensorType>(start->getOperand(0).getType());
  auto result = cast<RankedTensorType>(getType());
  if (isa<AllGatherStartOp>(start))
    return verifyGathered(*this, input, result);
  if (input != result)
    return emitOpError("result type ")
           << result << " differs from the started input's " << input;
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyGathered(*this, cast<RankedTensorType>(getInput().getType()),
                        cast<RankedTensorType>(getResult().getType()));
}

LogicalResult PackSignsOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (input.isDynamicDim(0))
    return emitOpError("expects a static input size");
  int64_t words = (input.getDimSize(0) + 31) / 32;
  if (result.getDimSize(0) != words)
    return emitOpError("result must have ceil(")
           << input.getDimSize(0) << " / 32) = " << words << " words";
  return success();
}

/// The mean of packed codes (mean_of_signs, mean_of_int8): a rank of
/// `codesPerWord` codes a word per scale, unpacked into the static result.
static LogicalResult verifyMeanOfPacked(Operation *op, Value wordsValue,
                                        Value scalesValue, Value resultValue,
                                        int64_t codesPerWord) {
  auto words = cast<RankedTensorType>(wordsValue.getType());
  auto scales = cast<RankedTensorType>(scalesValue.getType());
  auto result = cast<RankedTensorType>(resultValue.getType());
  if (result.getElementType() != scales.getElementType())
    return op->emitOpError("result must have the scales' element type");
  if (result.isDynamicDim(0) ||
      words.getDimSize(1) !=
          (result.getDimSize(0) + codesPerWord - 1) / codesPerWord)
    return op->emitOpError("expects a static result of at most ")
           << codesPerWord << " elements a word";
  if (failed(verifyCompatibleShape(ArrayRef<int64_t>{words.getDimSize(0)},
                                   ArrayRef<int64_t>{scales.getDimSize(0)})))
    return op->emitOpError("expects one scale a rank of words");
  return success();
}

LogicalResult MeanOfSignsOp::verify() {
  return verifyMeanOfPacked(*this, getWords(), getScales(), getResult(),
                            /*codesPerWord=*/32);
}

LogicalResult PackInt8Op::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto scale = cast<RankedTensorType>(getScale().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (input.isDynamicDim(0))
    return emitOpError("expects a static input size");
  if (scale.getElementType() != input.getElementType() ||
      scale.getDimSize(0) != 1)
    return emitOpError("expects one scale of the input's element type");
  int64_t words = (input.getDimSize(0) + 3) / 4;
  if (result.getDimSize(0) != words)
    return emitOpError("result must have ceil(")
           << input.getDimSize(0) << " / 4) = " << words << " words";
  return success();
}

LogicalResult MeanOfInt8Op::verify() {
  return verifyMeanOfPacked(*this, getWords(), getScales(), getResult(),
                            /*codesPerWord=*/4);
}
