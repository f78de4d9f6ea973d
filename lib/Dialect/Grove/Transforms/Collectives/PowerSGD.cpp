//===- PowerSGD.cpp - compressor=powersgd: low-rank factors ---------------===//
//
// PowerSGD (rank r, warm start) on a bucket: each matrix-shaped tensor
// whose factors are smaller is sent as P = M Q and Q = Mᵀ P (P
// orthogonalised between the two averages), the others densely with the
// Ps. Q of each matrix is state, started from grove.random_uniform. The
// average is what every rank applies, so error feedback keeps what it
// lacks of this rank's bucket.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

#include "grove/Dialect/Grove/Transforms/StateDecl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

class PowerSGD : public Compressor {
public:
  StringRef getName() const override { return "powersgd"; }
  StringRef getSummary() const override {
    return "rank-r factors of each matrix (matrix-rank), two all-reduces";
  }
  bool needsStepCounter() const override { return true; }
  FailureOr<Compressed> compress(CollectiveBuilder &build,
                                 const CollectiveConfig &config,
                                 ModuleOp module,
                                 const Bucket &bucket) const override;
  WireCost getWireCost(int64_t bytes, int64_t ratio) const override {
    // Its factors' size depends on the shapes; the pass gives it as
    // bytes / ratio: two all-reduces.
    return {double(bytes) / double(ratio), 2, 0, 0, 200};
  }
};

/// `p` (n x r) with orthonormal columns (Gram-Schmidt, in order).
Value orthogonalize(CollectiveBuilder &build, Value p) {
  auto type = cast<RankedTensorType>(p.getType());
  int64_t n = type.getDimSize(0), r = type.getDimSize(1);
  OpBuilder &b = build.b;
  Location loc = build.loc;
  auto sumAll = [&](Value v) {
    return ReduceSumOp::create(b, loc, v, ArrayRef<int64_t>{0, 1});
  };
  auto scalar = [&](double v) {
    return createSplatConstant(
        b, loc, RankedTensorType::get({}, type.getElementType()), v);
  };
  SmallVector<Value> columns;
  for (int64_t c = 0; c < r; ++c) {
    Value v = SliceOp::create(
        b, loc, RankedTensorType::get({n, 1}, type.getElementType()), p,
        b.getDenseI64ArrayAttr({0, c}), b.getDenseI64ArrayAttr({n, c + 1}),
        b.getDenseI64ArrayAttr({1, 1}));
    for (Value q : columns)
      v = SubOp::create(
          b, loc, v,
          MulOp::create(b, loc, sumAll(MulOp::create(b, loc, q, v)), q));
    Value norm = SqrtOp::create(b, loc, sumAll(MulOp::create(b, loc, v, v)));
    columns.push_back(
        DivOp::create(b, loc, v, AddOp::create(b, loc, norm, scalar(1e-8))));
  }
  if (columns.size() == 1)
    return columns.front();
  return ConcatOp::create(b, loc, type, columns, b.getI64IntegerAttr(1));
}

} // namespace

FailureOr<Compressed> PowerSGD::compress(CollectiveBuilder &build,
                                         const CollectiveConfig &config,
                                         ModuleOp module,
                                         const Bucket &bucket) const {
  Value e = bucket.flat, counter = bucket.counter;
  ArrayRef<Type> types = bucket.types;
  ArrayRef<int64_t> sizes = bucket.sizes;
  unsigned stream = bucket.stream;
  Operation *op = bucket.optimizer;
  OpBuilder &b = build.b;
  Location loc = build.loc;
  Type element = cast<RankedTensorType>(e.getType()).getElementType();
  int64_t r = config.matrixRank;
  SmallVector<Value> pieces = build.split(e, sizes);
  // The first call (counter 0) starts every Q from the shared random one.
  Value first = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      tensor::ExtractOp::create(b, loc, counter),
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
  Value mask = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, element),
      ValueRange{arith::UIToFPOp::create(
          b, loc, element,
          arith::ExtUIOp::create(b, loc, b.getI64Type(), first))});
  struct Matrix {
    unsigned index;
    int64_t n, m;
    Value mat, q;
    std::string qName;
  };
  SmallVector<Matrix> matrices;
  SmallVector<Value> firstMessage;
  SmallVector<int64_t> firstSizes;
  for (auto [i, type] : llvm::enumerate(types)) {
    auto shaped = cast<RankedTensorType>(type);
    int64_t n = shaped.getRank() >= 2 ? shaped.getDimSize(0) : 0;
    int64_t m = n ? shaped.getNumElements() / n : 0;
    if (!n || (n + m) * r >= n * m) {
      firstMessage.push_back(pieces[i]);
      firstSizes.push_back(sizes[i]);
      continue;
    }
    Matrix mat{unsigned(i), n, m, {}, {}, {}};
    mat.mat = ReshapeOp::create(b, loc, pieces[i], ArrayRef<int64_t>{n, m});
    mat.qName =
        ("collectives.bucket" + Twine(stream) + ".powersgd.q" + Twine(i)).str();
    auto qType = RankedTensorType::get({m, r}, element);
    if (failed(declareState(module, op, mat.qName, qType, 0.0)))
      return failure();
    Value state = GetParamOp::create(
        b, loc, qType, FlatSymbolRefAttr::get(b.getContext(), mat.qName));
    Value random =
        RandomUniformOp::create(b, loc, qType, config.seed, (stream << 8) + i);
    mat.q = SelectOp::create(b, loc, mask, random, state);
    Value pMat = MatmulOp::create(b, loc, mat.mat, mat.q);
    firstMessage.push_back(build.flatten(pMat));
    firstSizes.push_back(n * r);
    matrices.push_back(mat);
  }
  // One collective for the Ps and the uncompressed tensors, one for the Qs.
  SmallVector<Value> firstMeans =
      build.split(build.mean(build.concat(firstMessage)), firstSizes);
  SmallVector<Value> out(types.size());
  SmallVector<Value> qs;
  SmallVector<int64_t> qSizes;
  unsigned next = 0, message = 0;
  SmallVector<Value> orthogonal;
  for (unsigned i = 0; i < types.size(); ++i) {
    if (next < matrices.size() && matrices[next].index == i) {
      Matrix &mat = matrices[next++];
      Value p = ReshapeOp::create(b, loc, firstMeans[message++],
                                  ArrayRef<int64_t>{mat.n, r});
      p = orthogonalize(build, p);
      orthogonal.push_back(p);
      Value q = MatmulOp::create(b, loc, mat.mat, p, /*transposeLhs=*/true,
                                 /*transposeRhs=*/false);
      qs.push_back(build.flatten(q));
      qSizes.push_back(mat.m * r);
      continue;
    }
    out[i] = firstMeans[message++];
  }
  if (!matrices.empty()) {
    SmallVector<Value> qMeans =
        build.split(build.mean(build.concat(qs)), qSizes);
    for (auto [mat, p, qFlat] : llvm::zip(matrices, orthogonal, qMeans)) {
      Value q = ReshapeOp::create(b, loc, qFlat, ArrayRef<int64_t>{mat.m, r});
      SetParamOp::create(b, loc,
                         FlatSymbolRefAttr::get(b.getContext(), mat.qName), q);
      Value approx = MatmulOp::create(b, loc, p, q, /*transposeLhs=*/false,
                                      /*transposeRhs=*/true);
      out[mat.index] = build.flatten(approx);
    }
  }
  Value averaged = build.concat(out);
  // Error feedback keeps what the average lacks of this rank's bucket.
  return Compressed{averaged, averaged};
}

std::unique_ptr<Compressor> mlir::grove::createPowerSGDCompressor() {
  return std::make_unique<PowerSGD>();
}
