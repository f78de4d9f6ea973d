//===- ModelDescriptor.cpp - Parse the descriptor, write the C header -----===//

#include "grove/Target/ModelDescriptor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::grove;

static bool parseTensor(ArrayRef<StringRef> tokens, TensorSig &sig) {
  // NAME DTYPE RANK DIMS...
  int64_t rank;
  if (tokens.size() < 3 || tokens[2].getAsInteger(10, rank) || rank < 0 ||
      tokens.size() != static_cast<size_t>(3 + rank))
    return false;
  sig.name = tokens[0].str();
  sig.dtype = tokens[1].str();
  for (StringRef t : tokens.drop_front(3)) {
    int64_t d;
    if (t.getAsInteger(10, d) || d < -1)
      return false;
    sig.shape.push_back(d);
  }
  return true;
}

FailureOr<ModelDescriptor>
mlir::grove::parseModelDescriptor(StringRef text, std::string &error) {
  ModelDescriptor model;
  SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  if (lines.empty() || lines[0] != "grove-model 1") {
    error = "descriptor does not start with 'grove-model 1'";
    return failure();
  }
  for (auto [n, line] : llvm::enumerate(ArrayRef(lines).drop_front())) {
    SmallVector<StringRef> tok;
    line.split(tok, ' ', -1, false);
    auto bad = [&]() {
      error = "malformed descriptor line " + std::to_string(n + 2) + ": '" +
              line.str() + "'";
      return failure();
    };
    if (tok.empty())
      return bad();
    StringRef kind = tok[0];
    ArrayRef<StringRef> rest = ArrayRef(tok).drop_front();
    if (kind == "module" && rest.size() == 1) {
      model.module = rest[0].str();
    } else if (kind == "target" && rest.size() == 1 && n == 1) {
      model.target = rest[0].str();
    } else if (kind == "param") {
      TensorSig sig;
      if (!parseTensor(rest, sig))
        return bad();
      model.params.push_back(sig);
    } else if (kind == "entry" && rest.size() == 3) {
      EntrySig e;
      e.name = rest[0].str();
      model.entries.push_back(e);
    } else if ((kind == "input" || kind == "output") &&
               !model.entries.empty()) {
      TensorSig sig;
      if (!parseTensor(rest, sig))
        return bad();
      (kind == "input" ? model.entries.back().inputs
                       : model.entries.back().outputs)
          .push_back(sig);
    } else {
      return bad();
    }
  }
  return model;
}

FailureOr<std::string>
mlir::grove::findEmbeddedDescriptor(ModuleOp module, StringRef moduleName) {
  auto global = module.lookupSymbol<LLVM::GlobalOp>(
      ("_grove." + moduleName + ".desc").str());
  if (!global)
    return failure();
  auto str = dyn_cast_if_present<StringAttr>(global.getValueOrNull());
  if (!str)
    return failure();
  return str.getValue().rtrim('\0').str();
}

/// DLPack type code, bits of a descriptor dtype.
static std::pair<StringRef, int> dlpackType(StringRef dtype) {
  if (dtype == "bf16")
    return {"kDLBfloat", 16};
  if (dtype == "i1")
    return {"GROVE_DL_BOOL", 8};
  int bits = 0;
  dtype.drop_front().getAsInteger(10, bits);
  return {dtype.front() == 'f' ? "kDLFloat" : "kDLInt", bits};
}

/// `s` as a C string literal body: quotes, backslashes and non-printable
/// bytes escaped (octal), so any name the runtime sees is spelled exactly.
static std::string cString(StringRef s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\%03o", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

/// `s` safe inside a /* */ comment.
static std::string commentSafe(StringRef s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    if (s[i] == '*' && i + 1 < s.size() && s[i + 1] == '/')
      out += ' ';
  }
  return out;
}

static void emitSigArray(llvm::raw_ostream &os, StringRef prefix,
                         ArrayRef<TensorSig> sigs) {
  // Shapes are named by position: param names need not be C identifiers.
  for (auto [i, s] : llvm::enumerate(sigs)) {
    if (s.shape.empty())
      continue;
    os << "static const int64_t " << prefix << "_" << i << "_shape[] = {";
    llvm::interleaveComma(s.shape, os);
    os << "};\n";
  }
  if (sigs.empty())
    return;
  os << "static const grove_tensor_sig " << prefix << "[] = {\n";
  for (auto [i, s] : llvm::enumerate(sigs)) {
    auto [code, bits] = dlpackType(s.dtype);
    os << "  {\"" << cString(s.name) << "\", {" << code << ", " << bits
       << ", 1}, "
       << s.shape.size() << ", ";
    if (s.shape.empty())
      os << "0";
    else
      os << prefix << "_" << i << "_shape";
    os << "},\n";
  }
  os << "};\n";
}

static std::string shapeString(const TensorSig &s) {
  std::string r = s.dtype + "[";
  for (auto [i, d] : llvm::enumerate(s.shape))
    r += (i ? "x" : "") + (d < 0 ? std::string("?") : std::to_string(d));
  return r + "]";
}

std::string mlir::grove::emitCHeader(const ModelDescriptor &model,
                                     StringRef sourceName) {
  std::string out;
  llvm::raw_string_ostream os(out);
  std::string m = model.module;
  std::string guard = "GROVE_MODEL_" + llvm::StringRef(m).upper() + "_H";
  os << "/* " << m << ".h - generated by grovec from "
     << commentSafe(sourceName)
     << ". Do not edit.\n"
     << " *\n"
     << " * Link with lib" << m
     << ".a and libgrove_rt. Inputs are borrowed; each output is a new\n"
     << " * DLManagedTensor the caller releases with t->deleter(t). Every "
        "function\n"
     << " * returns GROVE_OK or an error whose message grove_last_error() "
        "gives. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <grove/runtime.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "/* Pass to grove_context_create. */\n"
     << "extern const grove_model_def " << m << "_model;\n\n";
  for (const EntrySig &e : model.entries) {
    os << "/* " << e.name << "(";
    for (auto [i, s] : llvm::enumerate(e.inputs))
      os << (i ? ", " : "") << s.name << ": " << shapeString(s);
    os << ") -> (";
    for (auto [i, s] : llvm::enumerate(e.outputs))
      os << (i ? ", " : "") << s.name << ": " << shapeString(s);
    os << ") */\n";
    os << "grove_status " << m << "_" << e.name << "(grove_context *ctx";
    for (const TensorSig &s : e.inputs)
      os << ", const DLTensor *" << s.name;
    for (const TensorSig &s : e.outputs)
      os << ", DLManagedTensor **" << s.name;
    os << ");\n\n";
  }
  os << "/* Signatures as data (dimension -1 is dynamic). */\n";
  // Signature arrays live under <module>_sig_ (grove-prepare-abi keeps entry
  // names from starting with sig_, so no entry point can collide).
  emitSigArray(os, m + "_sig_params", model.params);
  os << "#define " << llvm::StringRef(m).upper() << "_NUM_PARAMS "
     << model.params.size() << "\n";
  for (const EntrySig &e : model.entries) {
    emitSigArray(os, m + "_sig_" + e.name + "_inputs", e.inputs);
    emitSigArray(os, m + "_sig_" + e.name + "_outputs", e.outputs);
  }
  os << "static const grove_entry_sig " << m << "_sig_entries[] = {\n";
  for (const EntrySig &e : model.entries) {
    os << "  {\"" << cString(e.name) << "\", " << e.inputs.size() << ", ";
    os << (e.inputs.empty() ? "0" : m + "_sig_" + e.name + "_inputs") << ", "
       << e.outputs.size() << ", "
       << (e.outputs.empty() ? "0" : m + "_sig_" + e.name + "_outputs")
       << "},\n";
  }
  os << "};\n#define " << llvm::StringRef(m).upper() << "_NUM_ENTRIES "
     << model.entries.size() << "\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return out;
}
