//===- ExpandBF16Casts.cpp - bf16 <-> f32 as integer operations -----------===//
//
// On the host, LLVM lowers bf16 truncation to a libgcc helper that GCC 12
// does not ship (__truncsfbf2). After arith-emulate-unsupported-floats has
// moved bf16 arithmetic to f32, only the conversions are left; upstream's
// bf16 expansion turns them into shifts and rounding on integers. (The full
// arith-expand pass would also rewrite f32 maximumf into compare-and-select.)
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEEXPANDBF16CASTS
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {
struct GroveExpandBF16CastsPass
    : grove::impl::GroveExpandBF16CastsBase<GroveExpandBF16CastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
