//===- OutlineParallelLoops.cpp - scf.parallel into range functions -------===//
//
// First half of multithreading host code: each outermost scf.parallel worth
// a parallel region becomes a private function over a linear range of its
// outer iterations, called once over the whole range. The call is still
// sequential and correct; grove-dispatch-parallel-calls later gives the range
// to the runtime's thread team, after the LLVM lowering has turned every
// capture into plain scalars and pointers that fit in a struct.
//
//===----------------------------------------------------------------------===//

#include "HostLoops.h"
#include "grove/Codegen/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEOUTLINEPARALLELLOOPS
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {
/// Below this many outer iterations the outer dimensions are too few to
/// share out, so the innermost one is distributed as well.
constexpr int64_t kMinOuterIterations = 8;

/// Product of the constant trip counts of dimensions [begin, end) of `loop`;
/// nullopt if any is unknown. Saturates instead of overflowing.
std::optional<int64_t> dimsProduct(scf::ParallelOp loop, unsigned begin,
                                   unsigned end) {
  int64_t product = 1;
  for (unsigned d = begin; d < end; ++d) {
    std::optional<int64_t> n = grove::constantTripCount(
        loop.getLowerBound()[d], loop.getUpperBound()[d], loop.getStep()[d]);
    if (!n)
      return std::nullopt;
    if (llvm::MulOverflow(product, *n, product))
      product = std::numeric_limits<int64_t>::max();
  }
  return product;
}

/// Work of one iteration of the loop body: the product of the constant trip
/// counts of the loops nested in it (sibling loops overcount, which only
/// errs towards parallelism); nullopt if one is unknown.
std::optional<int64_t> bodyWork(scf::ParallelOp loop) {
  int64_t work = 1;
  bool known = true;
  loop.getBody()->walk([&](Operation *op) {
    std::optional<int64_t> n = 1;
    if (auto f = dyn_cast<scf::ForOp>(op))
      n = grove::constantTripCount(f.getLowerBound(), f.getUpperBound(),
                                   f.getStep());
    else if (auto p = dyn_cast<scf::ParallelOp>(op))
      n = dimsProduct(p, 0, p.getNumLoops());
    if (!n) {
      known = false;
      return WalkResult::interrupt();
    }
    // An empty loop does not make its siblings' work vanish.
    if (*n == 0)
      return WalkResult::advance();
    if (llvm::MulOverflow(work, *n, work))
      work = std::numeric_limits<int64_t>::max();
    return WalkResult::advance();
  });
  if (!known)
    return std::nullopt;
  return work;
}

struct GroveOutlineParallelLoopsPass
    : grove::impl::GroveOutlineParallelLoopsBase<
          GroveOutlineParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || func->hasAttr(grove::kParallelBodyAttr))
        continue;
      SmallVector<scf::ParallelOp> loops;
      func.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
        loops.push_back(loop);
        return WalkResult::skip(); // outermost loops only
      });
      unsigned counter = 0;
      for (scf::ParallelOp loop : loops)
        if (loop.getNumResults() == 0)
          outline(loop, func, counter, symbols);
    }
  }

  /// The outer dimensions to linearize, fewer than `numOuter` where one
  /// linear iteration would be less work than `minIterationWork` (the
  /// delinearization of the range index, a division per dimension, would
  /// then cost as much as the work): static dimensions move into the
  /// body, innermost first, as long as the range keeps at least
  /// kMinOuterIterations (or an unknown number of) iterations. An im2col's
  /// rows of kw elements, a pool's windows over a few channels of a small
  /// image, then run as nested loops instead of dividing the range index
  /// every few elements.
  unsigned nestShortInnerDims(scf::ParallelOp loop, unsigned numOuter,
                              std::optional<int64_t> body) {
    const unsigned rank = loop.getNumLoops();
    while (numOuter > 1 && body) {
      std::optional<int64_t> inner = dimsProduct(loop, numOuter, rank);
      int64_t work;
      if (!inner || llvm::MulOverflow(*inner, *body, work) ||
          work >= minIterationWork)
        break;
      std::optional<int64_t> rest = dimsProduct(loop, 0, numOuter - 1);
      if (!dimsProduct(loop, numOuter - 1, numOuter) ||
          (rest && *rest < kMinOuterIterations))
        break;
      --numOuter;
    }
    return numOuter;
  }

  void outline(scf::ParallelOp loop, func::FuncOp parent, unsigned &counter,
               SymbolTable &symbols) {
    const unsigned rank = loop.getNumLoops();
    // The innermost dimension stays a loop of its own only when it is the
    // one to vectorize: not when the body loops again (a reduction).
    bool bodyLoops = false;
    loop.getBody()->walk([&](LoopLikeOpInterface) { bodyLoops = true; });
    unsigned numOuter = rank == 1 || bodyLoops ? rank : rank - 1;
    std::optional<int64_t> outer = dimsProduct(loop, 0, numOuter);
    if (numOuter < rank && outer && *outer < kMinOuterIterations) {
      numOuter = rank;
      outer = dimsProduct(loop, 0, rank);
    }
    std::optional<int64_t> body = bodyWork(loop);
    numOuter = nestShortInnerDims(loop, numOuter, body);
    outer = dimsProduct(loop, 0, numOuter);
    // Work of one linear iteration, 0 when unknown (the runtime then
    // parallelizes whatever the range).
    std::optional<int64_t> inner = dimsProduct(loop, numOuter, rank);
    int64_t perIteration = 0;
    if (inner && body) {
      if (llvm::MulOverflow(*inner, *body, perIteration))
        perIteration = std::numeric_limits<int64_t>::max();
      if (perIteration == 0)
        return; // provably no work
      int64_t total;
      if (outer && !llvm::MulOverflow(*outer, perIteration, total) &&
          total < minWork)
        return;
    }

    MLIRContext *ctx = &getContext();
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    Type indexType = b.getIndexType();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);

    // Trip count of each outer dimension, and the linear range.
    SmallVector<Value> counts;
    Value total = arith::ConstantIndexOp::create(b, loc, 1);
    // Folded where static, so the body divides by constants.
    for (unsigned d = 0; d < numOuter; ++d) {
      Value diff = b.createOrFold<arith::SubIOp>(loc, loop.getUpperBound()[d],
                                                 loop.getLowerBound()[d]);
      Value n =
          b.createOrFold<arith::CeilDivSIOp>(loc, diff, loop.getStep()[d]);
      n = b.createOrFold<arith::MaxSIOp>(loc, n, zero);
      counts.push_back(n);
      total = b.createOrFold<arith::MulIOp>(loc, total, n);
    }

    // Everything the body needs from outside; constants are rematerialized.
    llvm::SetVector<Value> needed;
    getUsedValuesDefinedAbove(loop.getRegion(), needed);
    for (unsigned d = 0; d < rank; ++d) {
      needed.insert(loop.getLowerBound()[d]);
      needed.insert(loop.getStep()[d]);
      if (d >= numOuter)
        needed.insert(loop.getUpperBound()[d]);
    }
    // Delinearization divides by every count but the outermost.
    needed.insert(counts.begin() + 1, counts.end());
    // Constants and views are rebuilt inside (views from their sources, so
    // that two views of one buffer are still visibly one buffer there);
    // everything else is passed.
    llvm::SetVector<Value> args;
    llvm::SetVector<Operation *> rebuilt; // operands before users
    std::function<void(Value)> collect = [&](Value v) {
      Operation *def = v.getDefiningOp();
      bool constant = def && def->getNumOperands() == 0 &&
                      def->hasTrait<OpTrait::ConstantLike>();
      bool view = def && grove::getViewedMemRef(def) && isMemoryEffectFree(def);
      if (!def || def->getNumRegions() != 0 || (!constant && !view)) {
        args.insert(v);
        return;
      }
      if (rebuilt.contains(def))
        return;
      for (Value operand : def->getOperands())
        collect(operand);
      rebuilt.insert(def);
    };
    for (Value v : needed)
      collect(v);

    SmallVector<Type> argTypes = {indexType, indexType};
    for (Value v : args)
      argTypes.push_back(v.getType());
    OpBuilder mb(ctx);
    mb.setInsertionPointAfter(parent);
    std::string name =
        (parent.getSymName() + "__parallel_" + Twine(counter++)).str();
    auto fn = func::FuncOp::create(mb, loc, name,
                                   FunctionType::get(ctx, argTypes, {}));
    fn.setPrivate();
    fn->setAttr(grove::kParallelBodyAttr, mb.getI64IntegerAttr(perIteration));
    symbols.insert(fn); // renames on a clash

    Block *entry = fn.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockBegin(entry);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(args, entry->getArguments().drop_front(2)))
      map.map(v, arg);
    for (Operation *op : rebuilt)
      fb.clone(*op, map);
    Value one = arith::ConstantIndexOp::create(fb, loc, 1);
    // When the range covers every dimension and the body does not loop (an
    // elementwise op collapsed to one dimension), the range loop is the
    // innermost loop: it stays a parallel loop, so grove-host-loop-hints
    // hands its independence to the vectorizer.
    Value rangeIv;
    if (numOuter == rank && !bodyLoops) {
      auto range = scf::ParallelOp::create(fb, loc, entry->getArgument(0),
                                           entry->getArgument(1), one);
      fb.setInsertionPointToStart(range.getBody());
      rangeIv = range.getInductionVars().front();
    } else {
      auto range = scf::ForOp::create(fb, loc, entry->getArgument(0),
                                      entry->getArgument(1), one);
      fb.setInsertionPointToStart(range.getBody());
      rangeIv = range.getInductionVar();
    }
    {
      OpBuilder::InsertionGuard guard(fb);
      fb.setInsertionPointToEnd(entry);
      func::ReturnOp::create(fb, loc);
    }

    // Delinearize the range index into the outer induction variables
    // (folded where a step is 1 or a lower bound 0, so a one-dimensional
    // range indexes memory with the range's own induction variable).
    Value rest = rangeIv;
    SmallVector<Value> ivs(rank);
    for (int d = numOuter - 1; d >= 0; --d) {
      Value index = rest;
      if (d > 0) {
        Value n = map.lookup(counts[d]);
        index = fb.createOrFold<arith::RemUIOp>(loc, rest, n);
        rest = fb.createOrFold<arith::DivUIOp>(loc, rest, n);
      }
      Value scaled = fb.createOrFold<arith::MulIOp>(
          loc, index, map.lookup(loop.getStep()[d]));
      ivs[d] = fb.createOrFold<arith::AddIOp>(
          loc, map.lookup(loop.getLowerBound()[d]), scaled);
    }

    auto cloneBody = [&](OpBuilder &builder) {
      for (auto [iv, value] : llvm::zip(loop.getInductionVars(), ivs))
        map.map(iv, value);
      for (Operation &op : loop.getBody()->without_terminator())
        builder.clone(op, map);
    };
    if (numOuter == rank) {
      cloneBody(fb);
    } else {
      auto mapped = [&](ValueRange values) {
        return llvm::map_to_vector(values.drop_front(numOuter),
                                   [&](Value v) { return map.lookup(v); });
      };
      scf::ParallelOp::create(
          fb, loc, mapped(loop.getLowerBound()), mapped(loop.getUpperBound()),
          mapped(loop.getStep()),
          [&](OpBuilder &nb, Location, ValueRange innerIvs) {
            llvm::copy(innerIvs, ivs.begin() + numOuter);
            cloneBody(nb);
          });
    }

    SmallVector<int64_t> noalias =
        grove::getNoAliasCaptures(fn, args.getArrayRef(), /*firstCapture=*/2);
    if (!noalias.empty()) {
      fn->setAttr(grove::kNoAliasArgsAttr, mb.getDenseI64ArrayAttr(noalias));
      fn->setAttr(grove::kMemRefSignatureAttr,
                  TypeAttr::get(fn.getFunctionType()));
    }

    SmallVector<Value> callArgs = {zero, total};
    callArgs.append(args.begin(), args.end());
    func::CallOp::create(b, loc, fn, callArgs);
    loop.erase();
  }
};
} // namespace
