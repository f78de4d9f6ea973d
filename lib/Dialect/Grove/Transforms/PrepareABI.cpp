//===- PrepareABI.cpp - Record the model descriptor, mark entry points ----===//
//
// The descriptor is computed here, at tensor level, because it needs the
// signatures as the user wrote them (names, dtypes, dynamic dimensions),
// which are gone once functions are lowered to LLVM.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"
#include "grove/Dialect/Grove/Transforms/ABIAttrs.h"
#include "grove/Support/CNames.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEPREPAREABI
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;


/// Names the generated header cannot use for a parameter: C and C++
/// keywords, and `ctx`, the context parameter of every entry point.
static bool isReservedName(StringRef s) {
  static const llvm::StringSet<> reserved = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char8_t", "char16_t",
      "char32_t", "class", "compl", "concept", "const", "consteval",
      "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "ctx", "decltype", "default", "delete", "do",
      "double", "dynamic_cast", "else", "enum", "explicit", "export",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "mutable", "namespace", "new", "noexcept", "not",
      "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
      "public", "register", "reinterpret_cast", "requires", "restrict",
      "return", "short", "signed", "sizeof", "static", "static_assert",
      "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union",
      "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while",
      "xor", "xor_eq", "_Alignas", "_Alignof", "_Atomic", "_Bool",
      "_Complex", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert",
      "_Thread_local"};
  return reserved.contains(s);
}

/// The descriptor's dtype token, or "" when the type cannot cross the ABI.
static StringRef dtypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF64())
    return "f64";
  if (t.isSignlessInteger(1))
    return "i1";
  if (t.isSignlessInteger(8))
    return "i8";
  if (t.isSignlessInteger(16))
    return "i16";
  if (t.isSignlessInteger(32))
    return "i32";
  if (t.isSignlessInteger(64))
    return "i64";
  return "";
}

static void printTensor(llvm::raw_ostream &os, StringRef kind, StringRef name,
                        RankedTensorType type) {
  os << kind << ' ' << name << ' ' << dtypeName(type.getElementType()) << ' '
     << type.getRank();
  for (int64_t d : type.getShape())
    os << ' ' << (ShapedType::isDynamic(d) ? -1 : d);
  os << '\n';
}

static bool hasWhitespace(StringRef s) {
  return s.find_first_of(" \t\n\r\v\f") != StringRef::npos;
}

/// Checks that `type` can cross the C ABI; emits a diagnostic on `func`.
static LogicalResult checkABIType(func::FuncOp func, Type type,
                                  StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || dtypeName(tensor.getElementType()).empty())
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
    return func.emitError(kind) << " name '" << name
                                << "' is not a C identifier";
  if (isReservedName(name))
    return func.emitError(kind) << " name '" << name
                                << "' is reserved in the generated C header";
  if (!seen.insert(name).second)
    return func.emitError(kind) << " name '" << name << "' is used twice by @"
                                << func.getName();
  return success();
}

namespace {
struct GrovePrepareABIPass
    : grove::impl::GrovePrepareABIBase<GrovePrepareABIPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string name = moduleName;
    if (name.empty())
      name = module.getSymName() ? module.getSymName()->str() : "model";
    if (!isCIdentifier(name)) {
      module.emitError("module name '")
          << name
          << "' is not a C identifier (grovec: --name=, grove-opt: "
             "module-name=)";
      return signalPassFailure();
    }
    if (StringRef(name).starts_with("grove_")) {
      module.emitError("module name '")
          << name << "' is reserved: grove_ prefixes the runtime's symbols";
      return signalPassFailure();
    }

    // Generated code declares the runtime's grove_rt_* services and names
    // its own helpers _grove*: user symbols must leave both alone.
    for (Operation &op : *module.getBody()) {
      auto sym = dyn_cast<SymbolOpInterface>(op);
      if (!sym || isa<ParamOp>(op))
        continue;
      StringRef symName = sym.getName();
      if (symName.starts_with("grove_rt_") || symName.starts_with("_grove")) {
        op.emitError("symbol @")
            << symName << " is reserved (grove_rt_* and _grove* name the "
            << "runtime's services and generated helpers)";
        return signalPassFailure();
      }
    }

    std::string descriptor;
    llvm::raw_string_ostream os(descriptor);
    if (target != "host" && target != "cuda") {
      module.emitError("unknown target '") << target << "'";
      return signalPassFailure();
    }
    os << "grove-model 1\nmodule " << name << '\n';
    // The host is the default; older descriptors have no target line.
    if (target != "host")
      os << "target " << target << '\n';
    int64_t numParams = 0;
    for (auto param : module.getOps<ParamOp>()) {
      StringRef pname = param.getSymName();
      if (pname.empty() || hasWhitespace(pname) ||
          llvm::any_of(pname, [](char c) {
            return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
          })) {
        param.emitError("param name '")
            << pname
            << "' must be non-empty, without whitespace or control "
               "characters (it names a tensor in the weights file)";
        return signalPassFailure();
      }
      printTensor(os, "param", param.getSymName(), param.getTensorType());
      ++numParams;
    }

    SymbolTable symbols(module);
    // Generated code has no ABI for calling out: a call to a function with no
    // body could never be linked.
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
    if (external.wasInterrupted())
      return signalPassFailure();
    int64_t index = 0;
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (!func.isPublic() || func.isDeclaration())
        continue;
      std::string cName = name + "_" + func.getName().str();
      if (!isCIdentifier(func.getName())) {
        func.emitError("entry point name '")
            << func.getName() << "' is not a C identifier";
        return signalPassFailure();
      }
      FunctionType type = func.getFunctionType();
      llvm::StringSet<> seen;
      os << "entry " << func.getName() << ' ' << type.getNumInputs() << ' '
         << type.getNumResults() << '\n';
      // One tensor of the signature: its type, its `grove.name` (a string,
      // `<fallback>N` by default), its descriptor line.
      auto describe = [&](Type t, Attribute rawName, StringRef kind,
                          StringRef fallback, StringRef line,
                          size_t i) -> LogicalResult {
        if (failed(checkABIType(func, t, (kind + " " + Twine(i)).str())))
          return failure();
        auto name = dyn_cast_or_null<StringAttr>(rawName);
        if (rawName && !name)
          return func.emitError(kArgNameAttr)
                 << " of " << kind << ' ' << i << " must be a string, got "
                 << rawName;
        std::string n = name ? name.str() : (fallback + Twine(i)).str();
        if (failed(checkParamName(func, n, kind, seen)))
          return failure();
        printTensor(os, line, n, cast<RankedTensorType>(t));
        return success();
      };
      for (auto [i, t] : llvm::enumerate(type.getInputs()))
        if (failed(describe(t, func.getArgAttr(i, kArgNameAttr), "argument",
                            "arg", "input", i)))
          return signalPassFailure();
      for (auto [i, t] : llvm::enumerate(type.getResults()))
        if (failed(describe(t, func.getResultAttr(i, kArgNameAttr), "result",
                            "out", "output", i)))
          return signalPassFailure();
      OpBuilder b(func);
      // Inputs are borrowed from the caller: never written in place.
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        func.setArgAttr(i, "bufferization.writable", b.getBoolAttr(false));
      func->setAttr(kEntryIndexAttr, b.getI64IntegerAttr(index++));
      func->setAttr(kEntryNameAttr, b.getStringAttr(func.getName()));
      func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
      // The header declares <module>_model and <module>_sig_* next to the
      // entry points.
      if (func.getName() == "model" || func.getName().starts_with("sig_")) {
        func.emitError("entry point name '")
            << func.getName()
            << "' is reserved in the generated header (model, sig_*)";
        return signalPassFailure();
      }
      if (Operation *clash = symbols.lookup(cName)) {
        clash->emitError("symbol @")
            << cName << " is reserved for the C entry point of @"
            << func.getName();
        return signalPassFailure();
      }
      std::string internalName = "_grove_" + cName;
      if (Operation *clash = symbols.lookup(internalName)) {
        clash->emitError("symbol @")
            << internalName << " is reserved for entry point @"
            << func.getName();
        return signalPassFailure();
      }
      if (failed(symbols.rename(func, internalName))) {
        func.emitError("cannot rename entry point");
        return signalPassFailure();
      }
    }
    if (index == 0) {
      module.emitError("module has no public function to export");
      return signalPassFailure();
    }
    OpBuilder b(module);
    module->setAttr(kDescriptorAttr, b.getStringAttr(descriptor));
    module->setAttr(kModuleNameAttr, b.getStringAttr(name));
    module->setAttr(kNumParamsAttr, b.getI64IntegerAttr(numParams));
  }
};
} // namespace
