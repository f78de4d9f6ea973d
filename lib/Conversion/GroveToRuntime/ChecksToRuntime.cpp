//===- ChecksToRuntime.cpp - Checks and world queries to calls ------------===//
//
// A failed check must not abort the process (the application owns it) and
// must not let the computation read past a buffer: it reports to the
// runtime, which fails the call, and the code goes on with the smaller size.
// grove.world_size and grove.world_rank become runtime calls here, after
// bufferization: until then they are ops that declare they only read, which
// grove-overlap-collectives relies on (a call could write anything).
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/Passes.h"
#include "grove/Conversion/RuntimeServices.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_CONVERTGROVECHECKSTORUNTIME
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {
/// Expands one check in place. Reporters and message globals are declared
/// at the end of the module on first use; equal messages share a global.
struct LowerAgreeDims : OpRewritePattern<AgreeDimsOp> {
  LowerAgreeDims(MLIRContext *ctx, ModuleOp module, bool &declarationFailed)
      : OpRewritePattern(ctx), module(module),
        declarationFailed(declarationFailed) {}

  LogicalResult matchAndRewrite(AgreeDimsOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<func::FuncOp> reporter = getReporter(op.getAtLeast());
    if (failed(reporter)) {
      declarationFailed = true;
      return failure();
    }
    LLVM::GlobalOp message = getMessage(op);
    Location loc = op.getLoc();
    Value lhs = op.getLhs(), rhs = op.getRhs();
    Value differ = arith::CmpIOp::create(rewriter, loc,
                                         arith::CmpIPredicate::ne, lhs, rhs);
    scf::IfOp::create(rewriter, loc, differ, [&](OpBuilder &b, Location l) {
      Value lhs64 = arith::IndexCastOp::create(b, l, b.getI64Type(), lhs);
      Value rhs64 = arith::IndexCastOp::create(b, l, b.getI64Type(), rhs);
      Value msg = LLVM::AddressOfOp::create(b, l, message);
      func::CallOp::create(b, l, *reporter, ValueRange{lhs64, rhs64, msg});
      scf::YieldOp::create(b, l);
    });
    rewriter.replaceOpWithNewOp<arith::MinUIOp>(op, lhs, rhs);
    return success();
  }

private:
  /// Two sizes that differ, or (at_least) a size below its least; declared
  /// (or diagnosed) once.
  FailureOr<func::FuncOp> getReporter(bool atLeast) const {
    std::optional<FailureOr<func::FuncOp>> &reporter = reporters[atLeast];
    if (!reporter)
      reporter = declareService(module, atLeast ? Service::SizeBelow
                                                : Service::DimMismatch);
    return *reporter;
  }

  /// The NUL-terminated global holding `op`'s message.
  LLVM::GlobalOp getMessage(AgreeDimsOp op) const {
    LLVM::GlobalOp &global = messages[op.getMessage()];
    if (!global) {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      global = createCStringGlobal(
          b, op.getLoc(), "_grove.check." + std::to_string(messages.size()),
          op.getMessage());
    }
    return global;
  }

  mutable ModuleOp module;
  bool &declarationFailed;
  mutable std::optional<FailureOr<func::FuncOp>> reporters[2];
  mutable llvm::StringMap<LLVM::GlobalOp> messages;
};

/// grove.world_size / grove.world_rank -> grove_rt_world_size() /
/// grove_rt_world_rank() (abi.h), an i64 cast to index.
template <typename OpTy> struct LowerWorldQuery : OpRewritePattern<OpTy> {
  LowerWorldQuery(MLIRContext *ctx, Service service, bool &declarationFailed)
      : OpRewritePattern<OpTy>(ctx), service(service),
        declarationFailed(declarationFailed) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    FailureOr<func::FuncOp> fn =
        declareService(op->template getParentOfType<ModuleOp>(), service);
    if (failed(fn)) {
      declarationFailed = true;
      return failure();
    }
    Value n = func::CallOp::create(rewriter, op.getLoc(), *fn, ValueRange{})
                  .getResult(0);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(op, rewriter.getIndexType(),
                                                    n);
    return success();
  }

  Service service;
  bool &declarationFailed;
};

struct ConvertGroveChecksToRuntimePass
    : grove::impl::ConvertGroveChecksToRuntimeBase<
          ConvertGroveChecksToRuntimePass> {
  void runOnOperation() override {
    bool declarationFailed = false;
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerAgreeDims>(&getContext(), getOperation(),
                                 declarationFailed);
    patterns.add<LowerWorldQuery<WorldSizeOp>>(
        &getContext(), Service::WorldSize, declarationFailed);
    patterns.add<LowerWorldQuery<WorldRankOp>>(
        &getContext(), Service::WorldRank, declarationFailed);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    if (declarationFailed)
      signalPassFailure();
  }
};
} // namespace
