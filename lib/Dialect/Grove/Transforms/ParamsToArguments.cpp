//===- ParamsToArguments.cpp - grove.param state to function arguments ----===//
//
// Passing state as arguments keeps the generated code free of globals: the
// runtime context owns the buffers and hands them to every call, so two
// contexts of one model never share state. Each argument says which state it
// is and whether the function writes it (its role), so neither the runtime
// nor later passes depend on argument positions.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/Inliner.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEPARAMSTOARGUMENTS
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// The params a function touches, as indices in declaration order.
struct StateUse {
  llvm::SmallSetVector<unsigned, 8> reads, writes;
};

class StateLowering {
public:
  explicit StateLowering(ModuleOp module) : module(module) {
    for (auto [i, p] : llvm::enumerate(module.getOps<ParamOp>())) {
      index[p.getSymName()] = i;
      params.push_back(p);
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isDeclaration())
        defined.push_back(func);
  }

  LogicalResult run();

private:
  func::FuncOp definedCallee(func::CallOp call) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
    return callee && !callee.isDeclaration() ? callee : func::FuncOp();
  }
  void findWriters();
  LogicalResult inlineWriterCalls(func::FuncOp func);
  LogicalResult inlineCall(func::CallOp call, func::FuncOp callee);
  LogicalResult computeUses();
  SmallVector<unsigned> touchedBy(func::FuncOp func);
  LogicalResult addStateArguments(func::FuncOp func);
  void rewriteBody(func::FuncOp func);

  ModuleOp module;
  SmallVector<ParamOp> params;
  llvm::StringMap<unsigned> index;
  SmallVector<func::FuncOp> defined;
  llvm::DenseSet<Operation *> writers; // write state, themselves or callees
  llvm::DenseMap<Operation *, StateUse> uses;
};

/// Marks every function that writes state, directly or through a call.
void StateLowering::findWriters() {
  // grove.set_param sits directly in a function body (HasParent).
  for (func::FuncOp f : defined)
    if (!f.getBody().getOps<SetParamOp>().empty())
      writers.insert(f);
  for (bool changed = true; changed;) {
    changed = false;
    for (func::FuncOp f : defined) {
      if (writers.contains(f))
        continue;
      f.walk([&](func::CallOp call) {
        if (func::FuncOp callee = definedCallee(call);
            callee && writers.contains(callee)) {
          writers.insert(f);
          changed = true;
        }
      });
    }
  }
}

/// Inlines `call` of single-block `callee` in place, through the dialects'
/// inliner interfaces (upstream's inlineCall).
LogicalResult StateLowering::inlineCall(func::CallOp call,
                                        func::FuncOp callee) {
  if (!callee.getBody().hasOneBlock())
    return call.emitError("calls @")
           << callee.getName()
           << ", which writes state and has more than one block; state "
              "writes are inlined into their callers";
  InlinerInterface inliner(module.getContext());
  InlinerConfig config;
  if (failed(mlir::inlineCall(inliner, config.getCloneCallback(), call, callee,
                              &callee.getBody())))
    return call.emitError("cannot inline @")
           << callee.getName() << ", which writes state";
  call.erase();
  return success();
}

/// Inlines every call of a writer into `func`, to a fixed point (callees
/// of inlined bodies too); a call chain back to a function already being
/// inlined is recursion, which inlining cannot end.
LogicalResult StateLowering::inlineWriterCalls(func::FuncOp func) {
  // Bounded: each round removes one call; a recursive writer is caught by
  // the depth limit below.
  constexpr unsigned kMaxInlinedCalls = 1u << 16;
  for (unsigned n = 0;; ++n) {
    func::CallOp next;
    func.walk([&](func::CallOp call) {
      func::FuncOp callee = definedCallee(call);
      if (callee && writers.contains(callee)) {
        next = call;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!next)
      return success();
    func::FuncOp callee = definedCallee(next);
    if (callee == func || n == kMaxInlinedCalls)
      return next.emitError("calls @")
             << callee.getName()
             << ", which writes state, recursively; state writes are "
                "inlined into their callers";
    if (failed(inlineCall(next, callee)))
      return failure();
  }
}

/// The params each function reads and writes, through its calls too.
LogicalResult StateLowering::computeUses() {
  for (func::FuncOp f : defined) {
    StateUse &use = uses[f];
    WalkResult walk = f.walk([&](StateAccessOpInterface access) {
      FlatSymbolRefAttr name = access.getStateName();
      auto it = index.find(name.getValue());
      if (it == index.end()) {
        access->emitError("references an undefined grove.param ") << name;
        return WalkResult::interrupt();
      }
      (access.writesState() ? use.writes : use.reads).insert(it->second);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  // Reads through calls (writers are inlined by now), to a fixed point.
  for (bool changed = true; changed;) {
    changed = false;
    for (func::FuncOp f : defined)
      f.walk([&](func::CallOp call) {
        func::FuncOp callee = definedCallee(call);
        if (!callee)
          return;
        for (unsigned p : uses[callee].reads)
          changed |= uses[f].reads.insert(p);
      });
  }
  return success();
}

/// The params `func` reads or writes, in declaration order: its leading
/// arguments.
SmallVector<unsigned> StateLowering::touchedBy(func::FuncOp func) {
  const StateUse &use = uses[func];
  SmallVector<unsigned> touched(use.reads.begin(), use.reads.end());
  touched.append(use.writes.begin(), use.writes.end());
  llvm::sort(touched);
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  return touched;
}

LogicalResult StateLowering::addStateArguments(func::FuncOp func) {
  const StateUse &use = uses[func];
  SmallVector<unsigned> touched = touchedBy(func);
  Builder b(module.getContext());
  SmallVector<unsigned> positions(touched.size(), 0);
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs(touched.size(), func.getLoc());
  for (unsigned p : touched) {
    types.push_back(params[p].getType());
    SmallVector<NamedAttribute> role = {b.getNamedAttr(
        kStateArgAttr, FlatSymbolRefAttr::get(params[p].getSymNameAttr()))};
    if (use.writes.contains(p))
      role.push_back(b.getNamedAttr(kWritesAttr, b.getUnitAttr()));
    attrs.push_back(b.getDictionaryAttr(role));
  }
  if (failed(func.insertArguments(positions, types, attrs, locs)))
    return func.emitError("cannot add the state arguments");
  return success();
}

void StateLowering::rewriteBody(func::FuncOp func) {
  const StateUse &use = uses[func];
  SmallVector<unsigned> touched = touchedBy(func);
  // The current value of each param, in program order of the body.
  Block &entry = func.getBody().front();
  llvm::DenseMap<unsigned, Value> current;
  llvm::DenseMap<unsigned, Location> lastSet; // where diagnostics point
  for (auto [k, p] : llvm::enumerate(touched))
    current[p] = entry.getArgument(k);
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    op.walk([&](Operation *inner) {
      if (auto get = dyn_cast<GetParamOp>(inner)) {
        get.replaceAllUsesWith(current[index[get.getName()]]);
        get.erase();
      } else if (auto call = dyn_cast<func::CallOp>(inner)) {
        func::FuncOp callee = definedCallee(call);
        if (!callee)
          return;
        // The callee's state arguments are its leading ones, by role.
        SmallVector<Value> operands;
        for (unsigned k = 0; k < callee.getNumArguments(); ++k) {
          auto role =
              callee.getArgAttrOfType<FlatSymbolRefAttr>(k, kStateArgAttr);
          if (!role)
            break;
          operands.push_back(current[index[role.getValue()]]);
        }
        operands.append(call.getOperands().begin(), call.getOperands().end());
        call->setOperands(operands);
      }
    });
    if (auto set = dyn_cast<SetParamOp>(op)) {
      current[index[set.getName()]] = set.getValue();
      lastSet.insert_or_assign(index[set.getName()], set.getLoc());
      set.erase();
    }
  }
  // Writes last, after everything that allocates. (A write of the value
  // the state already holds canonicalizes away: AssignOp::canonicalize.)
  OpBuilder ob(entry.getTerminator());
  for (auto [k, p] : llvm::enumerate(touched))
    if (use.writes.contains(p))
      AssignOp::create(ob, lastSet.at(p), current[p], entry.getArgument(k));
}

LogicalResult StateLowering::run() {
  findWriters();
  for (func::FuncOp f : defined)
    if (failed(inlineWriterCalls(f)))
      return failure();
  if (failed(computeUses()))
    return failure();
  // Every signature first: a caller's calls forward state by its callee's
  // argument roles.
  for (func::FuncOp f : defined)
    if (failed(addStateArguments(f)))
      return failure();
  for (func::FuncOp f : defined)
    rewriteBody(f);
  return success();
}

struct GroveParamsToArgumentsPass
    : grove::impl::GroveParamsToArgumentsBase<GroveParamsToArgumentsPass> {
  void runOnOperation() override {
    if (failed(StateLowering(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
