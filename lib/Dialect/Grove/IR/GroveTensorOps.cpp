//===- GroveTensorOps.cpp - Verifiers of the general tensor ops -----------===//
//
// The ops several features share (GroveTensorOps.td's last section): row
// gathers and segment sums (trees, embeddings), scatter-add and top-k
// (sparse compressors), and the counter-based random draws.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::grove;

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

LogicalResult TopKOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto values = cast<RankedTensorType>(getValues().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto k = static_cast<int64_t>(getK());
  if (values.getElementType() != input.getElementType())
    return emitOpError("values must have the input's element type");
  if (values.getDimSize(0) != k || indices.getDimSize(0) != k)
    return emitOpError("values and indices must have k = ") << k << " elements";
  if (!input.isDynamicDim(0) && input.getDimSize(0) < k)
    return emitOpError("k = ") << k << " exceeds the input's "
                               << input.getDimSize(0) << " elements";
  return success();
}

LogicalResult ScatterAddOp::verify() {
  auto base = cast<RankedTensorType>(getBase().getType());
  auto indices = cast<ShapedType>(getIndices().getType());
  auto values = cast<ShapedType>(getValues().getType());
  if (getResult().getType() != base)
    return emitOpError("result must have the base's type");
  if (values.getElementType() != base.getElementType())
    return emitOpError("values must have the base's element type");
  if (!indices.hasRank() || !values.hasRank() ||
      failed(verifyCompatibleShape(indices.getShape(), values.getShape())))
    return emitOpError("indices and values must have one shape");
  return success();
}

LogicalResult RandomUniformOp::verify() {
  if (!getType().hasStaticShape())
    return emitOpError("expects a static shape, got ") << getType();
  auto stream = static_cast<int64_t>(getStream());
  if (stream < 0 || stream > 0xffffffff)
    return emitOpError("stream must be a 32-bit count, got ") << stream;
  return success();
}

LogicalResult RandomIndicesOp::verify() {
  auto extent = static_cast<int64_t>(getExtent()),
       stream = static_cast<int64_t>(getStream());
  int64_t count = getType().getDimSize(0);
  if (ShapedType::isDynamic(count) || count < 1 || count > extent ||
      extent > std::numeric_limits<int32_t>::max())
    return emitOpError("expects 1 <= count <= extent < 2^31, got ")
           << count << " of " << extent;
  if (stream < 0 || stream > 0xffffffff)
    return emitOpError("stream must be a 32-bit count, got ") << stream;
  return success();
}

int64_t RandomIndicesOp::getStride() {
  auto extent = static_cast<int64_t>(getExtent());
  auto start = static_cast<int64_t>(0.6180339887 * double(extent) + 0.5);
  for (int64_t d = 0; d <= extent; ++d)
    for (int64_t s : {start - d, start + d})
      if (s >= 1 && s < std::max<int64_t>(extent, 2) &&
          std::gcd(s, extent) == 1)
        return s;
  return 1;
}

void SegmentSumOp::build(OpBuilder &b, OperationState &state, Value input,
                         Value offsets) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = ShapedType::kDynamic;
  build(b, state, RankedTensorType::get(shape, type.getElementType()), input,
        offsets);
}

LogicalResult SegmentSumOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getRank() < 1 || in.getElementType() != out.getElementType() ||
      in.getShape().drop_front() != out.getShape().drop_front() ||
      !out.isDynamicDim(0))
    return emitOpError("result must be the input's rows, one per segment "
                       "(a dynamic dimension 0): expected the shape of ")
           << in << " with dimension 0 dynamic, got " << out;
  return success();
}

void GatherOp::build(OpBuilder &b, OperationState &state, Value input,
                     Value indices) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = cast<RankedTensorType>(indices.getType()).getDimSize(0);
  build(b, state, RankedTensorType::get(shape, type.getElementType()), input,
        indices);
}

LogicalResult GatherOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getRank() < 1 || in.getElementType() != out.getElementType() ||
      in.getShape().drop_front() != out.getShape().drop_front() ||
      out.getDimSize(0) != getIndices().getType().getDimSize(0))
    return emitOpError("result must be the input's rows, one per index: "
                       "expected the shape of ")
           << in << " with dimension 0 of " << getIndices().getType()
           << ", got " << out;
  return success();
}
