//===- GroveToLinalg.cpp - The convert-grove-to-linalg pass ---------------===//

#include "PopulatePatterns.h"

#include "grove/Conversion/Passes.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::grove {
#define GEN_PASS_DEF_CONVERTGROVETOLINALG
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {
struct ConvertGroveToLinalgPass
    : grove::impl::ConvertGroveToLinalgBase<ConvertGroveToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    target.addIllegalDialect<GroveDialect>();
    // State is the ABI passes' business; run-time checks are lowered by
    // convert-grove-checks-to-runtime.
    target.addLegalOp<ParamOp, GetParamOp, AgreeDimsOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });

    RewritePatternSet patterns(ctx);
    populateElementwisePatterns(patterns);
    populateContractionPatterns(patterns);
    populateReductionPatterns(patterns);
    populateDataMovementPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
