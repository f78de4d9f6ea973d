//===- ParamsToArguments.cpp - grove.param state to function arguments ----===//
//
// Passing state as arguments keeps the generated code free of globals: the
// runtime context owns the buffers and hands them to every call, so two
// contexts of one model never share weights, and an entry point that updates
// state (training) writes into the context's buffer.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/ABIAttrs.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEPARAMSTOARGUMENTS
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {
struct GroveParamsToArgumentsPass
    : grove::impl::GroveParamsToArgumentsBase<GroveParamsToArgumentsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ParamOp> params(module.getOps<ParamOp>());
    llvm::StringMap<unsigned> paramIndex;
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    Builder b(module.getContext());
    for (auto [i, p] : llvm::enumerate(params)) {
      paramIndex[p.getSymName()] = i;
      types.push_back(p.getType());
      // Weights are read-only for inference entry points: bufferization
      // must not reuse their buffers for results.
      attrs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr(kParamArgAttr, p.getSymNameAttr()),
           b.getNamedAttr("bufferization.writable", b.getBoolAttr(false))}));
    }

    SmallVector<func::FuncOp> defined;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isDeclaration())
        defined.push_back(func);

    for (func::FuncOp func : defined) {
      SmallVector<unsigned> indices(params.size(), 0);
      SmallVector<Location> locs(params.size(), func.getLoc());
      if (failed(func.insertArguments(indices, types, attrs, locs))) {
        func.emitError("cannot add the param arguments");
        return signalPassFailure();
      }
      Block &entry = func.getBody().front();
      WalkResult walk = func.walk([&](GetParamOp get) {
        auto it = paramIndex.find(get.getName());
        if (it == paramIndex.end()) {
          get.emitError("references an undefined grove.param ")
              << get.getNameAttr();
          return WalkResult::interrupt();
        }
        get.replaceAllUsesWith(entry.getArgument(it->second));
        get.erase();
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
    }

    // Calls between defined functions forward the caller's state.
    llvm::SmallPtrSet<Operation *, 8> definedSet;
    for (func::FuncOp f : defined)
      definedSet.insert(f);
    for (func::FuncOp caller : defined) {
      ValueRange state =
          caller.getBody().front().getArguments().take_front(params.size());
      caller.walk([&](func::CallOp call) {
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
        if (!callee || !definedSet.contains(callee))
          return;
        SmallVector<Value> operands(state);
        operands.append(call.getOperands().begin(), call.getOperands().end());
        call->setOperands(operands);
      });
    }

    for (ParamOp p : params)
      p.erase();
  }
};
} // namespace
