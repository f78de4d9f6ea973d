//===- NoAliasCaptures.cpp - Which captures of a range function alias -----===//
//
// A range function sees its buffers as unrelated pointers, so LLVM must
// assume that a store to one may change any other: an accumulator is
// reloaded after every load of the input it reduces, and vector loops carry
// runtime overlap checks. Where the buffers are provably distinct, the
// outliner says so, and grove-dispatch-parallel-calls marks the pointers
// `noalias` after the LLVM lowering (which drops argument attributes of
// memrefs).
//
//===----------------------------------------------------------------------===//

#include "HostLoops.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace {

/// Where a buffer comes from, as far as overlap goes.
enum class RootKind {
  Allocation, // memref.alloc/alloca: memory no other buffer has
  Global,     // memref.get_global: the library's own data
  State,      // an entry's state argument: a slot of the context's arena
  Input,      // an entry's input: any memory the caller has
  Unknown,    // anything else: may be any buffer
};

struct Root {
  RootKind kind;
  Value value;
  Attribute global;
};

Root getRoot(Value v) {
  v = grove::getViewRoot(v);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    // A private function's arguments are whatever its callers pass.
    if (!func || arg.getOwner() != &func.getBody().front() ||
        !func->hasAttr(grove::kEntryIndexAttr))
      return {RootKind::Unknown, v, {}};
    bool state =
        func.getArgAttr(arg.getArgNumber(), grove::kStateArgAttr) != nullptr;
    return {state ? RootKind::State : RootKind::Input, v, {}};
  }
  Operation *def = v.getDefiningOp();
  if (auto global = dyn_cast<memref::GetGlobalOp>(def))
    return {RootKind::Global, v, global.getNameAttr()};
  if (isa<memref::AllocOp, memref::AllocaOp>(def))
    return {RootKind::Allocation, v, {}};
  return {RootKind::Unknown, v, {}};
}

/// Whether two distinct captures may share memory. State buffers are
/// disjoint slots of the context's state arena (runtime/src/host/
/// Context.cpp); the caller's inputs may overlap each other and, for all
/// the compiler knows, the state.
bool mayOverlap(const Root &a, const Root &b) {
  if (a.kind == RootKind::Unknown || b.kind == RootKind::Unknown)
    return true;
  if (a.kind == RootKind::Global && b.kind == RootKind::Global)
    return a.global == b.global;
  if (a.value == b.value)
    return true;
  auto callerMemory = [](RootKind k) {
    return k == RootKind::Input || k == RootKind::State;
  };
  return (a.kind == RootKind::Input && callerMemory(b.kind)) ||
         (b.kind == RootKind::Input && callerMemory(a.kind));
}

/// The arguments of `body` it may write, through views of them; nullopt
/// when it calls out, frees, or writes memory it does not name.
std::optional<llvm::SmallDenseSet<unsigned>>
getWrittenArguments(func::FuncOp body) {
  llvm::SmallDenseSet<unsigned> written;
  Block *entry = &body.getBody().front();
  WalkResult result = body.getBody().walk([&](Operation *op) {
    if (isa<CallOpInterface>(op))
      return WalkResult::interrupt();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (MemoryEffects::EffectInstance &e : instances) {
      if (isa<MemoryEffects::Read, MemoryEffects::Allocate>(e.getEffect()))
        continue;
      if (!isa<MemoryEffects::Write>(e.getEffect()) || !e.getValue())
        return WalkResult::interrupt();
      Value target = grove::getViewRoot(e.getValue());
      auto arg = dyn_cast<BlockArgument>(target);
      if (arg && arg.getOwner() == entry) {
        written.insert(arg.getArgNumber());
        continue;
      }
      // A buffer the body allocates aliases no argument; anything else (a
      // select between arguments, a loop's iter_arg) may be any of them.
      if (getRoot(target).kind != RootKind::Allocation)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return std::nullopt;
  return written;
}

} // namespace

SmallVector<int64_t> grove::getNoAliasCaptures(func::FuncOp body,
                                               ValueRange captures,
                                               unsigned firstCapture) {
  std::optional<llvm::SmallDenseSet<unsigned>> written =
      getWrittenArguments(body);
  if (!written)
    return {};
  SmallVector<std::pair<unsigned, Root>> buffers;
  for (auto [i, v] : llvm::enumerate(captures)) {
    // Memory this analysis does not follow (an unranked memref, a raw
    // pointer) might be any buffer: promise nothing.
    if (isa<UnrankedMemRefType, LLVM::LLVMPointerType>(v.getType()))
      return {};
    if (isa<MemRefType>(v.getType()))
      buffers.push_back({firstCapture + i, getRoot(v)});
  }
  SmallVector<int64_t> noalias;
  for (auto &[i, root] : buffers) {
    // noalias promises that memory reached through this pointer is reached
    // through no other while the body runs, unless nobody writes it.
    bool alone = llvm::all_of(buffers, [&, i = i, &root = root](auto &other) {
      return other.first == i ||
             !(written->contains(i) || written->contains(other.first)) ||
             !mayOverlap(root, other.second);
    });
    if (alone)
      noalias.push_back(i);
  }
  return noalias;
}
