//===- PrepareABI.cpp - Record the model descriptor, mark entry points ----===//
//
// The descriptor is computed here, at tensor level, because it needs the
// signatures as the user wrote them (names, dtypes, dynamic dimensions),
// which are gone once functions are lowered to LLVM. It is kept typed
// (#grove.abi_model) until grove-emit-entry-points writes it.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveAttrs.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"
#include "grove/Support/CNames.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEPREPAREABI
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

/// Names the generated header cannot use for a parameter: C and C++
/// keywords, and `ctx`, the context parameter of every entry point.
static bool isReservedName(StringRef s) {
  static const llvm::StringSet<> reserved = {"alignas",
                                             "alignof",
                                             "and",
                                             "and_eq",
                                             "asm",
                                             "auto",
                                             "bitand",
                                             "bitor",
                                             "bool",
                                             "break",
                                             "case",
                                             "catch",
                                             "char",
                                             "char8_t",
                                             "char16_t",
                                             "char32_t",
                                             "class",
                                             "compl",
                                             "concept",
                                             "const",
                                             "consteval",
                                             "constexpr",
                                             "constinit",
                                             "const_cast",
                                             "continue",
                                             "co_await",
                                             "co_return",
                                             "co_yield",
                                             "ctx",
                                             "decltype",
                                             "default",
                                             "delete",
                                             "do",
                                             "double",
                                             "dynamic_cast",
                                             "else",
                                             "enum",
                                             "explicit",
                                             "export",
                                             "extern",
                                             "false",
                                             "float",
                                             "for",
                                             "friend",
                                             "goto",
                                             "if",
                                             "inline",
                                             "int",
                                             "long",
                                             "mutable",
                                             "namespace",
                                             "new",
                                             "noexcept",
                                             "not",
                                             "not_eq",
                                             "nullptr",
                                             "operator",
                                             "or",
                                             "or_eq",
                                             "private",
                                             "protected",
                                             "public",
                                             "register",
                                             "reinterpret_cast",
                                             "requires",
                                             "restrict",
                                             "return",
                                             "short",
                                             "signed",
                                             "sizeof",
                                             "static",
                                             "static_assert",
                                             "static_cast",
                                             "struct",
                                             "switch",
                                             "template",
                                             "this",
                                             "thread_local",
                                             "throw",
                                             "true",
                                             "try",
                                             "typedef",
                                             "typeid",
                                             "typename",
                                             "union",
                                             "unsigned",
                                             "using",
                                             "virtual",
                                             "void",
                                             "volatile",
                                             "wchar_t",
                                             "while",
                                             "xor",
                                             "xor_eq",
                                             "_Alignas",
                                             "_Alignof",
                                             "_Atomic",
                                             "_Bool",
                                             "_Complex",
                                             "_Generic",
                                             "_Imaginary",
                                             "_Noreturn",
                                             "_Static_assert",
                                             "_Thread_local"};
  return reserved.contains(s);
}

static ::grove::schema::TensorDesc tensorDesc(StringRef name,
                                              RankedTensorType type) {
  ::grove::schema::TensorDesc t;
  t.name = name.str();
  t.dtype = *toDLDataType(type.getElementType());
  for (int64_t d : type.getShape())
    t.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return t;
}

/// Whether generated C names starting with `prefix` (`<module>_...`, and
/// the header's `<MODULE>_...` macros) could land in the runtime's
/// namespace: grove_* functions and GROVE_* macros (any case), mgpu*, and
/// _mlir_* (exports.map).
static bool inRuntimeNamespace(StringRef module) {
  std::string lower = module.lower();
  return lower == "grove" || StringRef(lower).starts_with("grove_") ||
         module.starts_with("mgpu") || module.starts_with("_mlir");
}

/// Checks that `type` can cross the C ABI; emits a diagnostic on `func`.
static LogicalResult checkABIType(func::FuncOp func, Type type,
                                  StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (tensor && tensor.getRank() > ::grove::schema::kMaxRank)
    return func.emitError("entry point @")
           << func.getName() << ": " << what << " has rank " << tensor.getRank()
           << "; the runtime takes ranks up to " << ::grove::schema::kMaxRank;
  if (!tensor || !toDLDataType(tensor.getElementType()))
    return func.emitError("entry point @")
           << func.getName() << ": " << what << " has type " << type
           << "; entry points take and return ranked tensors of f32, f16, "
              "bf16, f64, i1, i8, i16, i32 or i64";
  return success();
}

/// Checks that `name` can be a parameter of the entry point's C function:
/// an identifier, not reserved, not already used by this entry point.
static LogicalResult checkParamName(func::FuncOp func, StringRef name,
                                    StringRef kind, llvm::StringSet<> &seen) {
  if (!isCIdentifier(name))
    return func.emitError(kind)
           << " name '" << name << "' is not a C identifier";
  if (isReservedName(name))
    return func.emitError(kind)
           << " name '" << name << "' is reserved in the generated C header";
  if (!seen.insert(name).second)
    return func.emitError(kind)
           << " name '" << name << "' is used twice by @" << func.getName();
  return success();
}

namespace {

using ::grove::schema::Access;
using ::grove::schema::ArgDesc;
using ::grove::schema::EntryDesc;
using ::grove::schema::ModelDesc;
using ::grove::schema::StateDesc;
using ::grove::schema::StateKind;

/// The module-level checks: the library's name, and symbols the runtime
/// and the generated code reserve.
static LogicalResult checkModule(ModuleOp module, StringRef name) {
  if (!isCIdentifier(name))
    return module.emitError("module name '")
           << name
           << "' is not a C identifier (grovec: --name=, grove-opt: "
              "module-name=)";
  if (inRuntimeNamespace(name))
    return module.emitError("module name '")
           << name
           << "' is reserved: the generated names <module>_* would land in "
              "the runtime's namespace (grove_*, GROVE_*, mgpu*, _mlir*)";
  // Generated code declares the runtime's grove_rt_* services and names
  // its own helpers _grove*: user symbols must leave both alone.
  for (Operation &op : *module.getBody()) {
    auto sym = dyn_cast<SymbolOpInterface>(op);
    if (!sym || isa<ParamOp>(op))
      continue;
    StringRef symName = sym.getName();
    if (symName.starts_with("grove_rt_") || symName.starts_with("_grove"))
      return op.emitError("symbol @")
             << symName << " is reserved (grove_rt_* and _grove* name the "
             << "runtime's services and generated helpers)";
  }
  // Generated code has no ABI for calling out: a call to a function with no
  // body could never be linked.
  SymbolTable symbols(module);
  WalkResult external = module.walk([&](func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (callee && callee.isDeclaration()) {
      call.emitError("call to @")
          << call.getCallee()
          << ", which has no body: a model's functions must all be defined "
             "in the module";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(external.wasInterrupted());
}

/// The descriptor's state lines, one per grove.param.
static LogicalResult describeState(ModuleOp module, ModelDesc &model,
                                   llvm::StringMap<size_t> &index) {
  for (auto param : module.getOps<ParamOp>()) {
    StringRef pname = param.getSymName();
    if (!::grove::schema::isValidName(pname)) {
      bool spaced = pname.empty() || llvm::any_of(pname, [](char c) {
                      return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
                    });
      return param.emitError("param name '")
             << pname
             << (spaced ? "' must be non-empty, without whitespace or "
                          "control characters"
                        : "' is not valid UTF-8")
             << " (it names a tensor in the weights file)";
    }
    StateDesc state;
    static_cast<::grove::schema::TensorDesc &>(state) =
        tensorDesc(pname, param.getTensorType());
    if (FailureOr<uint64_t> bits = param.getInitialBits(); succeeded(bits)) {
      state.kind = StateKind::Initialized;
      state.initBits = *bits;
    }
    index[pname] = model.params.size();
    model.params.push_back(std::move(state));
  }
  return success();
}

/// One entry's descriptor: its arguments by role, its results; marks
/// which arguments bufferization may write.
static LogicalResult describeEntry(func::FuncOp func,
                                   const llvm::StringMap<size_t> &stateIndex,
                                   EntryDesc &entry) {
  entry.name = func.getName().str();
  if (!isCIdentifier(func.getName()))
    return func.emitError("entry point name '")
           << func.getName() << "' is not a C identifier";
  // The header declares <module>_model and <module>_sig_* next to the
  // entry points.
  if (func.getName() == "model" || func.getName().starts_with("sig_"))
    return func.emitError("entry point name '")
           << func.getName()
           << "' is reserved in the generated header (model, sig_*)";
  FunctionType type = func.getFunctionType();
  llvm::StringSet<> seen;
  // One tensor of the signature: its type, its `grove.name` (a string,
  // `<fallback>N` by default), its descriptor entry.
  auto describe = [&](Type t, Attribute rawName, StringRef kind,
                      StringRef fallback,
                      size_t i) -> FailureOr<::grove::schema::TensorDesc> {
    if (failed(checkABIType(func, t, (kind + " " + Twine(i)).str())))
      return failure();
    auto name = dyn_cast_or_null<StringAttr>(rawName);
    std::string n = name ? name.str() : (fallback + Twine(i)).str();
    if (failed(checkParamName(func, n, kind, seen)))
      return failure();
    return tensorDesc(n, cast<RankedTensorType>(t));
  };
  OpBuilder b(func);
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    if (auto role =
            func.getArgAttrOfType<FlatSymbolRefAttr>(i, kStateArgAttr)) {
      auto it = stateIndex.find(role.getValue());
      if (it == stateIndex.end())
        return func.emitError("argument ")
               << i << " is state " << role << ", which is not a grove.param";
      bool writes = func.getArgAttr(i, kWritesAttr) != nullptr;
      entry.args.push_back(
          {true, it->second, writes ? Access::Write : Access::Read});
      // Only the state the function writes may be written in place.
      func.setArgAttr(i, "bufferization.writable", b.getBoolAttr(writes));
      continue;
    }
    // Named and counted as the user wrote them, without the state.
    FailureOr<::grove::schema::TensorDesc> input =
        describe(t, func.getArgAttr(i, kArgNameAttr), "argument", "arg",
                 entry.inputs.size());
    if (failed(input))
      return failure();
    // The bound and a forest's facts move into the descriptor as
    // preconditions the runtime checks (input indices: arguments before
    // the state).
    std::vector<::grove::schema::Precondition> &pre = input->preconditions;
    if (auto below = func.getArgAttrOfType<IntegerAttr>(i, kBelowAttr)) {
      pre.push_back(::grove::schema::BoundPrecondition{below.getInt()});
      func.removeArgAttr(i, kBelowAttr);
    }
    if (auto forest =
            func.getArgAttrOfType<DenseI64ArrayAttr>(i, kForestAttr)) {
      pre.push_back(
          ::grove::schema::ForestPrecondition{forest[0], forest[1], forest[2]});
      func.removeArgAttr(i, kForestAttr);
    }
    if (auto nodes = func.getArgAttrOfType<IntegerAttr>(i, kForestNodesAttr)) {
      pre.push_back(::grove::schema::ForestNodesPrecondition{nodes.getInt()});
      func.removeArgAttr(i, kForestNodesAttr);
    }
    entry.args.push_back({false, entry.inputs.size(), Access::Read});
    entry.inputs.push_back(std::move(*input));
    // Inputs are borrowed from the caller: never written in place.
    func.setArgAttr(i, "bufferization.writable", b.getBoolAttr(false));
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    FailureOr<::grove::schema::TensorDesc> output =
        describe(t, func.getResultAttr(i, kArgNameAttr), "result", "out", i);
    if (failed(output))
      return failure();
    entry.outputs.push_back(std::move(*output));
  }
  return success();
}

/// A collective op as the ranks compare it: what it does and to what type
/// (a started all-reduce exchanges what a blocking one does).
static std::string describeCollective(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto reduce = dyn_cast<AllReduceOp>(op))
    os << "all_reduce " << stringifyReductionKind(reduce.getKind());
  else if (auto reduce = dyn_cast<AllReduceStartOp>(op))
    os << "all_reduce " << stringifyReductionKind(reduce.getKind());
  else if (auto broadcast = dyn_cast<BroadcastOp>(op))
    os << "broadcast root " << broadcast.getRoot();
  else
    os << "all_gather";
  os << " " << op->getOperand(0).getType();
  return text;
}

/// The collectives `func` runs, in program order, through the functions it
/// calls too (each once), and the options grove-insert-collectives left on
/// it, which move into the descriptor.
static void describeCollectives(func::FuncOp func, SymbolTable &symbols,
                                EntryDesc &entry) {
  llvm::SmallPtrSet<Operation *, 4> visited;
  std::function<void(func::FuncOp)> visit = [&](func::FuncOp f) {
    if (!visited.insert(f).second)
      return;
    if (auto config = f->getAttrOfType<StringAttr>(kCollectivesConfigAttr))
      if (entry.collectives.config.empty())
        entry.collectives.config = config.str();
    f.walk([&](Operation *op) {
      if (isa<AllReduceOp, AllReduceStartOp, AllGatherOp, AllGatherStartOp,
              BroadcastOp>(op))
        entry.collectives.ops.push_back(describeCollective(op));
      else if (auto call = dyn_cast<func::CallOp>(op))
        if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
          visit(callee);
    });
  };
  visit(func);
}

/// Marks `func` as entry `index` and renames it out of the C namespace.
static LogicalResult markEntry(func::FuncOp func, StringRef module,
                               int64_t index, size_t numInputs,
                               SymbolTable &symbols) {
  OpBuilder b(func);
  func->setAttr(kEntryIndexAttr, b.getI64IntegerAttr(index));
  func->setAttr(kEntryNameAttr, b.getStringAttr(func.getName()));
  func->setAttr(kEntryInputsAttr, b.getI64IntegerAttr(numInputs));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  // Sizes of its inputs are the runtime's to check only where every call
  // comes through the runtime (convert-grove-to-linalg, docs/abi.md).
  if (!SymbolTable::symbolKnownUseEmpty(func, symbols.getOp()))
    func->setAttr(kEntryCalledAttr, b.getUnitAttr());
  std::string cName = (module + "_" + func.getName()).str();
  if (Operation *clash = symbols.lookup(cName))
    return clash->emitError("symbol @")
           << cName << " is reserved for the C entry point of @"
           << func.getName();
  std::string internalName = "_grove_" + cName;
  if (Operation *clash = symbols.lookup(internalName))
    return clash->emitError("symbol @")
           << internalName << " is reserved for entry point @"
           << func.getName();
  if (failed(symbols.rename(func, internalName)))
    return func.emitError("cannot rename entry point");
  return success();
}

struct GrovePrepareABIPass
    : mlir::grove::impl::GrovePrepareABIBase<GrovePrepareABIPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(prepare()))
      signalPassFailure();
  }

  LogicalResult prepare() {
    ModuleOp module = getOperation();
    std::string name = moduleName;
    if (name.empty())
      name = module.getSymName() ? module.getSymName()->str() : "model";
    if (failed(checkModule(module, name)))
      return failure();

    ModelDesc model;
    model.module = name;
    model.target = stringifyCompileTarget(target).str();
    llvm::StringMap<size_t> stateIndex;
    if (failed(describeState(module, model, stateIndex)))
      return failure();
    SymbolTable symbols(module);
    for (auto func :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (!func.isPublic() || func.isDeclaration())
        continue;
      EntryDesc entry;
      describeCollectives(func, symbols, entry);
      if (failed(describeEntry(func, stateIndex, entry)) ||
          failed(markEntry(func, name, model.entries.size(),
                           entry.inputs.size(), symbols)))
        return failure();
      model.entries.push_back(std::move(entry));
    }
    if (model.entries.empty())
      return module.emitError("module has no public function to export");
    for (auto func : module.getOps<func::FuncOp>())
      func->removeAttr(kCollectivesConfigAttr);

    // Preconditions the user wrote (grove.forest, grove.forest_nodes) may
    // name inputs that cannot hold them: refused here, located.
    if (::grove::schema::ParseResult r = ::grove::schema::validateModel(model))
      return module.emitError("invalid model descriptor")
             << (r.where.empty() ? "" : " at " + r.where) << ": " << r.message;
    OpBuilder b(module);
    module->setAttr(kModelAttr,
                    ABIModelAttr::fromSchema(module.getContext(), model));
    module->setAttr(kModuleNameAttr, b.getStringAttr(name));
    // The descriptor holds the state now; the context owns its storage.
    for (ParamOp p : llvm::make_early_inc_range(module.getOps<ParamOp>()))
      p.erase();
    return success();
  }
};
} // namespace
