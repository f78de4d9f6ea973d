//===- ShortenBufferLifetimes.cpp - Free each buffer after its last use ---===//
//
// The ownership-based deallocation pipeline frees a block's buffers at the
// end of the block. For a network written as one function that is the end of
// the forward pass: every activation stays allocated until the last layer
// is done, and the peak memory is their sum (ResNeSt-50 at batch 16: twice
// PyTorch's). A buffer allocated and freed in one block, which nothing
// outside that block reaches, can be freed right after the last operation
// of the block that uses it or anything derived from it.
//
//===----------------------------------------------------------------------===//

#include "grove/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Block.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVESHORTENBUFFERLIFETIMES
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {

/// The last operation of `block` that uses `alloc` or a memref derived from
/// it (any memref result of a user counts as derived: views, casts, and
/// whatever an unknown op might return), other than `dealloc`; null if a use
/// lies outside the block or lets the buffer escape it (a terminator).
Operation *findLastUse(memref::AllocOp alloc, Operation *dealloc) {
  Block *block = alloc->getBlock();
  Operation *last = alloc;
  SmallVector<Value> worklist = {alloc.getResult()};
  llvm::SmallPtrSet<Value, 8> seen = {alloc.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == dealloc)
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || ancestor->hasTrait<OpTrait::IsTerminator>() ||
          user->hasTrait<OpTrait::IsTerminator>())
        return nullptr;
      if (isa<memref::DeallocOp>(user))
        return nullptr; // freed through an alias: leave it alone
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()) && seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return last;
}

struct GroveShortenBufferLifetimesPass
    : grove::impl::GroveShortenBufferLifetimesBase<
          GroveShortenBufferLifetimesPass> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation()->walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
    for (memref::DeallocOp dealloc : deallocs) {
      auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != dealloc->getBlock())
        continue;
      Operation *last = findLastUse(alloc, dealloc);
      if (last && last->isBeforeInBlock(dealloc))
        dealloc->moveAfter(last);
    }
  }
};

} // namespace
