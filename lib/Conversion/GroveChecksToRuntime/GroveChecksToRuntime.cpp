//===- GroveChecksToRuntime.cpp - grove.agree_dims to runtime calls -------===//
//
// A failed check must not abort the process (the application owns it) and
// must not let the computation read past a buffer: it reports to the
// runtime, which fails the call, and the code goes on with the smaller size.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/Passes.h"
#include "grove/Conversion/RuntimeCalls.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::grove {
#define GEN_PASS_DEF_CONVERTGROVECHECKSTORUNTIME
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {
struct ConvertGroveChecksToRuntimePass
    : grove::impl::ConvertGroveChecksToRuntimeBase<
          ConvertGroveChecksToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AgreeDimsOp> checks;
    module.walk([&](AgreeDimsOp op) { checks.push_back(op); });
    if (checks.empty())
      return;

    MLIRContext *ctx = &getContext();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = b.getI64Type();
    // Two sizes that differ, or (at_least) a size below its least: the
    // reporters the checks need, declared before the message globals.
    func::FuncOp reporters[2];
    for (AgreeDimsOp op : checks) {
      func::FuncOp &fn = reporters[op.getAtLeast()];
      if (fn)
        continue;
      FailureOr<func::FuncOp> declared = getOrDeclareRuntimeFunction(
          module,
          op.getAtLeast() ? "grove_rt_size_below" : "grove_rt_dim_mismatch",
          b.getFunctionType({i64, i64, ptr}, {}));
      if (failed(declared))
        return signalPassFailure();
      fn = *declared;
    }

    // One NUL-terminated message global per distinct message.
    llvm::StringMap<LLVM::GlobalOp> messages;
    for (AgreeDimsOp op : checks) {
      StringRef text = op.getMessage();
      LLVM::GlobalOp &global = messages[text];
      if (!global)
        global = createCStringGlobal(
            b, op.getLoc(), "_grove.check." + std::to_string(messages.size()),
            text);

      func::FuncOp callee = reporters[op.getAtLeast()];
      OpBuilder ib(op);
      Location loc = op.getLoc();
      Value differ = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::ne,
                                           op.getLhs(), op.getRhs());
      scf::IfOp::create(ib, loc, differ, [&](OpBuilder &tb, Location tl) {
        Value l = arith::IndexCastOp::create(tb, tl, i64, op.getLhs());
        Value r = arith::IndexCastOp::create(tb, tl, i64, op.getRhs());
        Value msg = LLVM::AddressOfOp::create(tb, tl, global);
        func::CallOp::create(tb, tl, callee, ValueRange{l, r, msg});
        scf::YieldOp::create(tb, tl);
      });
      Value smaller = arith::MinUIOp::create(ib, loc, op.getLhs(), op.getRhs());
      op.replaceAllUsesWith(smaller);
      op.erase();
    }
  }
};
} // namespace
