//===- DispatchParallelCalls.cpp - Range functions onto the thread team ---===//
//
// Second half of multithreading host code. After the LLVM lowering a call of
// a grove.parallel_body function passes (lo, hi) and its captures as plain
// scalars and pointers (memrefs are exploded descriptors by then), so they
// pack into one stack struct. The runtime then calls a generated thunk
// `void(ptr ctx, i64 lo, i64 hi)` on sub-ranges from each thread.
//
//===----------------------------------------------------------------------===//

#include "HostLoops.h"
#include "grove/Codegen/Passes.h"
#include "grove/Conversion/RuntimeServices.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Path.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEDISPATCHPARALLELCALLS
#include "grove/Codegen/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;

namespace {

/// The first file location in `loc` ("file:line:col", the file's base
/// name), or "" where there is none.
std::string locationName(Location loc) {
  std::string name;
  loc->walk([&](Location l) {
    if (auto file = dyn_cast<FileLineColLoc>(l)) {
      name = (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
              Twine(file.getLine()) + ":" + Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}
using grove::kMemRefSignatureAttr;
using grove::kNoAliasArgsAttr;
using grove::kParallelBodyAttr;

struct GroveDispatchParallelCallsPass
    : grove::impl::GroveDispatchParallelCallsBase<
          GroveDispatchParallelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<LLVM::CallOp, LLVM::LLVMFuncOp>> calls;
    module.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee)
        return;
      auto body = symbols.lookup<LLVM::LLVMFuncOp>(*callee);
      if (body && body->hasAttr(kParallelBodyAttr))
        calls.push_back({call, body});
    });
    if (calls.empty())
      return;

    MLIRContext *ctx = &getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    FailureOr<LLVM::LLVMFuncOp> runtimeFn =
        grove::declareServiceLLVM(module, grove::Service::ParallelFor);
    if (failed(runtimeFn))
      return signalPassFailure();

    DenseMap<Operation *, LLVM::LLVMFuncOp> thunks;
    for (auto [call, body] : calls)
      if (failed(markNoAlias(body)))
        return signalPassFailure();
    for (auto [call, body] : calls) {
      Location loc = call.getLoc();
      auto bodyType = body.getFunctionType();
      auto work = dyn_cast<IntegerAttr>(body->getAttr(kParallelBodyAttr));
      auto rangeType = bodyType.getNumParams() >= 2
                           ? dyn_cast<IntegerType>(bodyType.getParams()[0])
                           : IntegerType();
      if (!work || !rangeType || rangeType.getWidth() > 64 ||
          bodyType.getParams()[1] != rangeType ||
          call.getArgOperands().size() != bodyType.getNumParams()) {
        call.emitOpError("does not match the parallel body it calls (an "
                         "integer grove.parallel_body work, integer (lo, hi) "
                         "of at most 64 bits, then the captures)");
        return signalPassFailure();
      }
      ValueRange captures = call.getArgOperands().drop_front(2);
      auto fields = llvm::to_vector(captures.getTypes());
      auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);

      LLVM::LLVMFuncOp &thunk = thunks[body];
      if (!thunk)
        thunk = createThunk(body, structType, symbols);

      // The context lives in the caller's entry block so a call inside a
      // loop does not grow the stack; the runtime returns only when every
      // thread is done with it.
      OpBuilder b(call);
      Value context;
      if (fields.empty()) {
        context = LLVM::ZeroOp::create(b, loc, ptrType);
      } else {
        auto parent = call->getParentOfType<LLVM::LLVMFuncOp>();
        OpBuilder eb = OpBuilder::atBlockBegin(&parent.getBody().front());
        Value one = LLVM::ConstantOp::create(eb, loc, i64, 1);
        context = LLVM::AllocaOp::create(eb, loc, ptrType, structType, one);
        for (auto [i, value] : llvm::enumerate(captures)) {
          Value field = LLVM::GEPOp::create(
              b, loc, ptrType, structType, context,
              ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
          LLVM::StoreOp::create(b, loc, value, field);
        }
      }
      Value thunkPtr = LLVM::AddressOfOp::create(b, loc, thunk);
      Value workValue = LLVM::ConstantOp::create(b, loc, i64, work.getInt());
      Value lo = call.getArgOperands()[0], hi = call.getArgOperands()[1];
      if (rangeType != i64) {
        lo = LLVM::SExtOp::create(b, loc, i64, lo);
        hi = LLVM::SExtOp::create(b, loc, i64, hi);
      }
      // Traces name the loop by where it came from (a body without a
      // location by its symbol): one string a body, whatever its calls.
      std::string symbol = (body.getSymName() + "__name").str();
      Value name;
      if (auto global = module.lookupSymbol<LLVM::GlobalOp>(symbol)) {
        name = LLVM::AddressOfOp::create(b, loc, global);
      } else {
        std::string where = locationName(body.getLoc());
        if (where.empty())
          where = body.getSymName().str();
        // A C string: createGlobalString stores the bytes it is given.
        where.push_back('\0');
        name = LLVM::createGlobalString(loc, b, symbol, where,
                                        LLVM::Linkage::Internal);
      }
      LLVM::CallOp::create(
          b, loc, *runtimeFn,
          ValueRange{thunkPtr, context, lo, hi, workValue, name});
      call.erase();
    }
    // The marker has served its purpose; the module leaves the pass as
    // plain LLVM dialect.
    for (auto [call, body] : calls)
      body->removeAttr(kParallelBodyAttr);
  }

  /// Marks noalias the aligned pointers of the memrefs the outliner found
  /// unaliased (grove.noalias_args, NoAliasCaptures.cpp). The LLVM lowering
  /// exploded each memref of the recorded signature into (allocated,
  /// aligned, offset, sizes..., strides...), an unranked one into (rank,
  /// descriptor); every other argument is one.
  LogicalResult markNoAlias(LLVM::LLVMFuncOp body) {
    auto indices = body->getAttrOfType<DenseI64ArrayAttr>(kNoAliasArgsAttr);
    auto signature = body->getAttrOfType<TypeAttr>(kMemRefSignatureAttr);
    if (!indices)
      return success();
    body->removeAttr(kNoAliasArgsAttr);
    body->removeAttr(kMemRefSignatureAttr);
    auto memrefType =
        signature ? dyn_cast<FunctionType>(signature.getValue()) : nullptr;
    if (!memrefType)
      return body.emitOpError("has ")
             << kNoAliasArgsAttr << " without a function type as "
             << kMemRefSignatureAttr;
    SmallVector<unsigned> first;
    unsigned next = 0;
    for (Type type : memrefType.getInputs()) {
      first.push_back(next);
      if (auto memref = dyn_cast<MemRefType>(type))
        next += MemRefDescriptor::getNumUnpackedValues(memref);
      else if (isa<UnrankedMemRefType>(type))
        next += UnrankedMemRefDescriptor::getNumUnpackedValues();
      else
        next += 1;
    }
    ArrayRef<Type> params = body.getFunctionType().getParams();
    if (next != params.size())
      return body.emitOpError("has ")
             << params.size() << " arguments where its memref signature "
             << memrefType << " explodes into " << next;
    for (int64_t i : indices.asArrayRef()) {
      if (i < 0 || i >= static_cast<int64_t>(first.size()) ||
          !isa<MemRefType>(memrefType.getInput(i)) ||
          !isa<LLVM::LLVMPointerType>(params[first[i] + 1]))
        return body.emitOpError("has no memref argument ")
               << i << " to mark noalias";
      body.setArgAttr(first[i] + 1, LLVM::LLVMDialect::getNoAliasAttrName(),
                      UnitAttr::get(body.getContext()));
    }
    return success();
  }

  /// `void <body>__thunk(ptr ctx, i64 lo, i64 hi)`: loads the captures and
  /// calls the body on [lo, hi).
  LLVM::LLVMFuncOp createThunk(LLVM::LLVMFuncOp body,
                               LLVM::LLVMStructType structType,
                               SymbolTable &symbols) {
    MLIRContext *ctx = &getContext();
    Location loc = body.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto rangeType = body.getFunctionType().getParams()[0];
    OpBuilder mb(ctx);
    mb.setInsertionPointAfter(body);
    auto thunk = LLVM::LLVMFuncOp::create(
        mb, loc, (body.getSymName() + "__thunk").str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                    {ptrType, i64, i64}),
        LLVM::Linkage::Internal);
    symbols.insert(thunk);
    Block *entry = thunk.addEntryBlock(mb);
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    SmallVector<Value> args = {entry->getArgument(1), entry->getArgument(2)};
    if (rangeType != i64) {
      for (Value &v : args)
        v = LLVM::TruncOp::create(b, loc, rangeType, v);
    }
    for (auto [i, type] : llvm::enumerate(structType.getBody())) {
      Value field = LLVM::GEPOp::create(
          b, loc, ptrType, structType, entry->getArgument(0),
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      args.push_back(LLVM::LoadOp::create(b, loc, type, field));
    }
    LLVM::CallOp::create(b, loc, body, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return thunk;
  }
};
} // namespace
