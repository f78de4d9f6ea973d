//===- EmitEntryPoints.cpp - The C ABI of a lowered model -----------------===//
//
// Generated code stays tiny and dumb: the typed entry point only packs its
// arguments and calls grove_rt_invoke, which checks every tensor against the
// descriptor and marshals DLTensors to memref descriptors. Keeping the checks
// in the runtime means they are written (and tested) once, in C++, instead
// of being emitted as IR for every model.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/Passes.h"
#include "grove/Conversion/RuntimeServices.h"
#include "grove/Dialect/Grove/IR/ABIAttrs.h"

#include "grove/Dialect/Grove/IR/GroveAttrs.h"
#include "grove/ModelSchema.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

// The struct layout this pass emits must match grove_model_def.
#include "grove/abi.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEEMITENTRYPOINTS
#include "grove/Conversion/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

struct Entry {
  int64_t index;
  std::string name;        // as the user wrote it
  LLVM::LLVMFuncOp ciface; // _mlir_ciface_ wrapper of the lowered function
  unsigned numArgs;        // state and inputs, in the function's order
  unsigned numInputs;      // the caller's inputs among them
  unsigned numResults;
};

static Value insertValue(OpBuilder &b, Location loc, Value aggregate,
                         Value element, int64_t position) {
  return LLVM::InsertValueOp::create(b, loc, aggregate, element,
                                     ArrayRef<int64_t>{position});
}

/// `void <packed>(ptr args)`: unpacks the arguments (state and inputs, in
/// the function's order, as the descriptor lists them) and the result
/// buffer, and calls the ciface wrapper.
static LLVM::LLVMFuncOp createPacked(OpBuilder &b, Location loc, StringRef name,
                                     const Entry &e) {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
  auto fn =
      LLVM::LLVMFuncOp::create(b, loc, name, type, LLVM::Linkage::Internal);
  OpBuilder::InsertionGuard guard(b);
  Block *body = fn.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  Value args = body->getArgument(0);
  unsigned numArgs = e.numArgs;
  SmallVector<Value> callArgs;
  auto load = [&](unsigned i) -> Value {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, args,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    return LLVM::LoadOp::create(b, loc, ptr, slot);
  };
  if (e.numResults > 0)
    callArgs.push_back(load(numArgs));
  for (unsigned i = 0; i < numArgs; ++i)
    callArgs.push_back(load(i));
  LLVM::CallOp::create(b, loc, e.ciface, callArgs);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return fn;
}

/// `i32 <module>_<name>(ptr ctx, ptr in..., ptr out...)`: forwards to
/// grove_rt_invoke(ctx, &model, index, {in..., out...}).
static void createTyped(OpBuilder &b, Location loc, StringRef name,
                        const Entry &e, LLVM::LLVMFuncOp invoke,
                        LLVM::GlobalOp model) {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = b.getI32Type();
  unsigned n = e.numInputs + e.numResults;
  SmallVector<Type> params(1 + n, ptr);
  auto fn = LLVM::LLVMFuncOp::create(b, loc, name,
                                     LLVM::LLVMFunctionType::get(i32, params));
  OpBuilder::InsertionGuard guard(b);
  Block *body = fn.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  Value count = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                         b.getI64IntegerAttr(std::max(n, 1u)));
  Value array = LLVM::AllocaOp::create(b, loc, ptr, ptr, count);
  for (unsigned i = 0; i < n; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, array,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    LLVM::StoreOp::create(b, loc, body->getArgument(1 + i), slot);
  }
  Value modelAddr = LLVM::AddressOfOp::create(b, loc, model);
  Value index =
      LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(e.index));
  auto status = LLVM::CallOp::create(
      b, loc, invoke,
      ValueRange{body->getArgument(0), modelAddr, index, array});
  LLVM::ReturnOp::create(b, loc, status.getResult());
}

/// The descriptor JSON: the module's #grove.abi_model with the sizes the
/// entries' code assumes equal (kEqualDimsAttr, by entry index) added as
/// equal_dim preconditions of their inputs. The one place it is written.
FailureOr<std::string>
describeModel(ModuleOp module, ABIModelAttr attr,
              const DenseMap<int64_t, DenseI64ArrayAttr> &equalDims) {
  namespace schema = ::grove::schema;
  FailureOr<schema::ModelDesc> model = ABIModelAttr::toSchema(
      [&] { return module.emitError(); }, attr.getModule(), attr.getTarget(),
      attr.getState(), attr.getEntries());
  if (failed(model))
    return failure();
  for (auto [index, quads] : equalDims) {
    ArrayRef<int64_t> q = quads.asArrayRef();
    if (index < 0 || index >= static_cast<int64_t>(model->entries.size()))
      return module.emitError("equal sizes recorded for an unknown entry"),
             failure();
    std::vector<schema::TensorDesc> &inputs = model->entries[index].inputs;
    for (size_t i = 0; i + 3 < q.size(); i += 4) {
      schema::Precondition eq =
          schema::EqualDimPrecondition{q[i + 1], q[i + 2], q[i + 3]};
      if (q[i] >= static_cast<int64_t>(inputs.size()) || q[i + 2] >= q[i])
        return module.emitError("equal sizes name inputs out of order or "
                                "out of range"),
               failure();
      std::vector<schema::Precondition> &list = inputs[q[i]].preconditions;
      if (std::find(list.begin(), list.end(), eq) == list.end())
        list.push_back(eq);
    }
  }
  if (schema::ParseResult r = schema::validateModel(*model))
    return module.emitError("equal sizes make an invalid descriptor")
               << (r.where.empty() ? "" : " at " + r.where) << ": "
               << r.message,
           failure();
  // What every loader will read: the one reader must take it back.
  std::string text = schema::printModelDescriptor(*model);
  schema::ModelDesc back;
  if (schema::ParseResult r = schema::parseModelDescriptor(text, back))
    return module.emitError("internal: the descriptor written does not read "
                            "back: ")
               << r.message,
           failure();
  return text;
}

// Generated helpers are named `_grove.<module>.<what>`: the dots keep them
// apart from every C identifier a user symbol or entry point can have.
struct GroveEmitEntryPointsPass
    : mlir::grove::impl::GroveEmitEntryPointsBase<GroveEmitEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto descriptor = module->getAttrOfType<ABIModelAttr>(kModelAttr);
    auto moduleName = module->getAttrOfType<StringAttr>(kModuleNameAttr);
    if (!descriptor || !moduleName) {
      module.emitError("expects a module prepared by grove-prepare-abi");
      return signalPassFailure();
    }
    std::string prefix = moduleName.str();

    SmallVector<Entry> entries;
    DenseMap<int64_t, DenseI64ArrayAttr> equalDims;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      // func-to-llvm copies the entry attributes onto the ciface wrapper.
      auto index = fn->getAttrOfType<IntegerAttr>(kEntryIndexAttr);
      if (!index || fn.getName().starts_with("_mlir_ciface_"))
        continue;
      if (auto quads = fn->getAttrOfType<DenseI64ArrayAttr>(kEqualDimsAttr))
        equalDims[index.getInt()] = quads;
      auto ciface = module.lookupSymbol<LLVM::LLVMFuncOp>(
          ("_mlir_ciface_" + fn.getName()).str());
      auto name = fn->getAttrOfType<StringAttr>(kEntryNameAttr);
      auto inputs = fn->getAttrOfType<IntegerAttr>(kEntryInputsAttr);
      if (!ciface || !name || !inputs) {
        fn.emitError("entry point lacks its _mlir_ciface_ wrapper or name, or "
                     "its input count");
        return signalPassFailure();
      }
      // The lowered function returns its results packed in one struct (or
      // nothing); the ciface wrapper then takes a leading result pointer.
      Type ret = fn.getFunctionType().getReturnType();
      unsigned numResults = 0;
      if (auto st = dyn_cast<LLVM::LLVMStructType>(ret)) {
        // One memref result is its descriptor struct {ptr, ptr, i64, ...};
        // several are a struct of descriptor structs.
        bool nested = llvm::all_of(
            st.getBody(), [](Type t) { return isa<LLVM::LLVMStructType>(t); });
        numResults = nested ? st.getBody().size() : 1;
      } else if (!isa<LLVM::LLVMVoidType>(ret)) {
        fn.emitError("entry point returns a non-tensor value");
        return signalPassFailure();
      }
      unsigned numArgs = ciface.getNumArguments() - (numResults > 0);
      unsigned numInputs = inputs.getInt();
      if (numInputs > numArgs) {
        fn.emitError("entry point has fewer arguments than inputs");
        return signalPassFailure();
      }
      entries.push_back(
          {index.getInt(), name.str(), ciface, numArgs, numInputs, numResults});
    }
    llvm::sort(entries, [](const Entry &a, const Entry &b) {
      return a.index < b.index;
    });
    for (auto [i, e] : llvm::enumerate(entries))
      if (e.index != static_cast<int64_t>(i)) {
        module.emitError("entry point indices are not contiguous");
        return signalPassFailure();
      }

    // Everything we generated from the user's functions is internal: only
    // the typed entry points and the model definition are the library's API.
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (!fn.isExternal())
        fn.setLinkage(LLVM::Linkage::Internal);

    MLIRContext *ctx = &getContext();
    Location loc = module.getLoc();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = b.getI32Type();

    FailureOr<LLVM::LLVMFuncOp> invoke =
        declareServiceLLVM(module, Service::Invoke);
    if (failed(invoke))
      return signalPassFailure();

    SmallVector<LLVM::LLVMFuncOp> packed;
    for (const Entry &e : entries)
      packed.push_back(createPacked(
          b, loc, "_grove." + prefix + "." + e.name + ".packed", e));

    auto modelType =
        LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, ptr, ptr, ptr});
    static_assert(sizeof(grove_model_def) == 32, "layout emitted below");
    LLVM::GlobalOp nameStr =
        createCStringGlobal(b, loc, "_grove." + prefix + ".name", prefix);
    FailureOr<std::string> text = describeModel(module, descriptor, equalDims);
    if (failed(text))
      return signalPassFailure();
    LLVM::GlobalOp descStr =
        createCStringGlobal(b, loc, "_grove." + prefix + ".desc", *text);
    // Also in a section of its own, so a loader can read every model's
    // descriptor from the object, archive or library file without running
    // it (docs/abi.md).
    descStr.setSection(StringRef(::grove::schema::kDescriptorSection));
    auto tableType = LLVM::LLVMArrayType::get(ptr, entries.size());
    auto table =
        LLVM::GlobalOp::create(b, loc, tableType, true, LLVM::Linkage::Internal,
                               "_grove." + prefix + ".entries", Attribute());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&table.getInitializerRegion().emplaceBlock());
      Value v = LLVM::UndefOp::create(b, loc, tableType);
      for (auto [i, fn] : llvm::enumerate(packed)) {
        Value addr = LLVM::AddressOfOp::create(b, loc, fn);
        v = insertValue(b, loc, v, addr, i);
      }
      LLVM::ReturnOp::create(b, loc, v);
    }
    auto model =
        LLVM::GlobalOp::create(b, loc, modelType, true, LLVM::Linkage::External,
                               prefix + "_model", Attribute());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&model.getInitializerRegion().emplaceBlock());
      Value v = LLVM::UndefOp::create(b, loc, modelType);
      auto c32 = [&](int64_t x) {
        return LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(x));
      };
      v = insertValue(b, loc, v, c32(GROVE_ABI_VERSION), 0);
      v = insertValue(b, loc, v, c32(entries.size()), 1);
      v = insertValue(b, loc, v, LLVM::AddressOfOp::create(b, loc, nameStr), 2);
      v = insertValue(b, loc, v, LLVM::AddressOfOp::create(b, loc, descStr), 3);
      v = insertValue(b, loc, v, LLVM::AddressOfOp::create(b, loc, table), 4);
      LLVM::ReturnOp::create(b, loc, v);
    }

    for (const Entry &e : entries)
      createTyped(b, loc, prefix + "_" + e.name, e, *invoke, model);

    // The ABI attributes have been consumed; LLVM IR has no use for them.
    for (StringRef attr : {kModelAttr, kModuleNameAttr})
      module->removeAttr(attr);
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      fn->removeAttr(kEntryIndexAttr);
      fn->removeAttr(kEntryNameAttr);
      fn->removeAttr(kEntryInputsAttr);
      fn->removeAttr(kEqualDimsAttr);
      fn->removeAttr(kEntryCalledAttr);
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
        fn.removeArgAttr(i, kArgNameAttr);
        fn.removeArgAttr(i, kStateArgAttr);
        fn.removeArgAttr(i, kWritesAttr);
      }
      for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
        fn.removeResultAttr(i, StringAttr::get(ctx, kArgNameAttr));
    }
  }
};

} // namespace
