//===- ModelSchema.cpp - Read, check and write the model descriptor -------===//
//
// The reader is nlohmann's JSON parser used without exceptions
// (StrictJson.h, and every value's type checked before it is read), so the
// compiler, built without exceptions, links this file as the runtime does.
//
//===----------------------------------------------------------------------===//

#include "grove/ModelSchema.h"

#include "StrictJson.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

namespace grove::schema {
namespace {

using json = nlohmann::json;

struct DTypeToken {
  const char *token;
  DLDataType type;
};

constexpr DTypeToken kDTypes[] = {
    {"f32", {kDLFloat, 32, 1}},   {"f16", {kDLFloat, 16, 1}},
    {"bf16", {kDLBfloat, 16, 1}}, {"f64", {kDLFloat, 64, 1}},
    {"i8", {kDLInt, 8, 1}},       {"i16", {kDLInt, 16, 1}},
    {"i32", {kDLInt, 32, 1}},     {"i64", {kDLInt, 64, 1}},
    {"i1", {kDLBoolCode, 8, 1}},
};

bool sameType(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/// A descriptor nests seven deep (entries, an entry, its inputs, an input,
/// its preconditions, one of them); far deeper input is corrupted or
/// hostile.
constexpr int kMaxDepth = 16;

ParseResult invalid(std::string where, std::string message) {
  return {ParseStatus::Invalid, std::move(where), std::move(message)};
}

/// Reads one JSON object field by field: each read names what it expects,
/// and done() refuses keys nobody read.
class ObjectReader {
public:
  ObjectReader(const json &value, std::string where)
      : value(value), where(std::move(where)) {
    if (!value.is_object())
      error = invalid(this->where, "expected a JSON object");
  }

  const json *field(const char *key, bool optional = false) {
    if (error)
      return nullptr;
    seen.insert(key);
    auto it = value.find(key);
    if (it != value.end())
      return &*it;
    if (!optional)
      error = invalid(where, std::string("missing \"") + key + "\"");
    return nullptr;
  }
  void string(const char *key, std::string &out) {
    if (const json *v = field(key)) {
      if (v->is_string())
        out = v->get_ref<const std::string &>();
      else
        error = invalid(at(key), "expected a string");
    }
  }
  /// An integer in [least, most].
  void integer(const char *key, int64_t least, int64_t most, int64_t &out,
               bool optional = false) {
    const json *v = field(key, optional);
    if (!v)
      return;
    bool ok = false;
    int64_t x = 0;
    if (v->is_number_unsigned()) {
      uint64_t u = v->get<uint64_t>();
      ok = u <= uint64_t(INT64_MAX);
      x = int64_t(u);
    } else if (v->is_number_integer()) {
      ok = true;
      x = v->get<int64_t>();
    }
    if (ok && x >= least && x <= most) {
      out = x;
      return;
    }
    error =
        invalid(at(key), "expected an integer in [" + std::to_string(least) +
                             ", " + std::to_string(most) + "]");
  }
  const json *array(const char *key, size_t most) {
    const json *v = field(key);
    if (!v)
      return nullptr;
    if (!v->is_array() || v->size() > most) {
      error = invalid(at(key), "expected an array of at most " +
                                   std::to_string(most) + " items");
      return nullptr;
    }
    return v;
  }
  ParseResult done() {
    if (error)
      return error;
    for (auto it = value.begin(); it != value.end(); ++it)
      if (!seen.count(it.key()))
        return invalid(where, "unknown key \"" + it.key() + "\"");
    return {};
  }
  std::string at(const std::string &key) const {
    return where.empty() ? key : where + "." + key;
  }

  ParseResult error;

private:
  const json &value;
  std::string where;
  std::set<std::string> seen;
};

std::string item(const std::string &where, size_t i) {
  return where + "[" + std::to_string(i) + "]";
}

ParseResult readPrecondition(const json &value, const std::string &where,
                             Precondition &out) {
  ObjectReader r(value, where);
  std::string kind;
  r.string("kind", kind);
  if (r.error)
    return r.error;
  const int64_t most = kMaxEntryTensors;
  if (kind == "below") {
    BoundPrecondition p;
    r.integer("bound", 1, INT64_MAX, p.bound);
    out = p;
  } else if (kind == "equal_dim") {
    EqualDimPrecondition p;
    r.integer("dim", 0, kMaxRank - 1, p.dim);
    r.integer("input", 0, most, p.input);
    r.integer("input_dim", 0, kMaxRank - 1, p.inputDim);
    out = p;
  } else if (kind == "forest") {
    ForestPrecondition p;
    r.integer("children", 0, most, p.children);
    r.integer("roots", 0, most, p.roots);
    r.integer("arity", 0, INT32_MAX, p.arity);
    out = p;
  } else if (kind == "forest_nodes") {
    ForestNodesPrecondition p;
    r.integer("offsets", 0, most, p.offsets);
    out = p;
  } else {
    return invalid(r.at("kind"), "unknown precondition kind \"" + kind + "\"");
  }
  return r.done();
}

/// `{"name", "dtype", "shape"}` and, for inputs, `"preconditions"`; the
/// caller reads its other keys from `r` and calls done().
ParseResult readTensorFields(ObjectReader &r, bool allowDynamic, bool isInput,
                             TensorDesc &out) {
  std::string dtype;
  r.string("name", out.name);
  r.string("dtype", dtype);
  if (r.error)
    return r.error;
  if (!dtypeFromToken(dtype, out.dtype))
    return invalid(r.at("dtype"), "unknown dtype \"" + dtype + "\"");
  if (const json *shape = r.array("shape", kMaxRank)) {
    for (size_t d = 0; d < shape->size(); ++d) {
      const json &dim = (*shape)[d];
      if (!dim.is_number_integer() ||
          (dim.is_number_unsigned() ? dim.get<uint64_t>() > INT64_MAX
                                    : dim.get<int64_t>() < -1) ||
          (!allowDynamic && !dim.is_number_unsigned()))
        return invalid(item(r.at("shape"), d),
                       allowDynamic ? "expected a size >= 0, or -1 (dynamic)"
                                    : "expected a size >= 0 (state is static)");
      out.shape.push_back(dim.get<int64_t>());
    }
  }
  if (!isInput || r.error)
    return r.error;
  const json *list = r.field("preconditions", /*optional=*/true);
  if (!list)
    return r.error;
  if (!list->is_array() || list->size() > size_t(kMaxPreconditions))
    return invalid(r.at("preconditions"),
                   "expected an array of at most " +
                       std::to_string(kMaxPreconditions));
  for (size_t i = 0; i < list->size(); ++i) {
    out.preconditions.emplace_back();
    if (ParseResult e =
            readPrecondition((*list)[i], item(r.at("preconditions"), i),
                             out.preconditions.back()))
      return e;
  }
  return {};
}

ParseResult readState(const json &value, const std::string &where,
                      StateDesc &out) {
  ObjectReader r(value, where);
  if (ParseResult e = readTensorFields(r, false, false, out))
    return e;
  if (const json *init = r.field("init", /*optional=*/true)) {
    // Hex text: a 64-bit pattern does not survive a JSON number (a double)
    // in every reader.
    std::string bits = init->is_string() ? init->get<std::string>() : "";
    bool ok = bits.size() >= 3 && bits.size() <= 18 && bits.rfind("0x", 0) == 0;
    for (size_t i = 2; ok && i < bits.size(); ++i)
      ok = (bits[i] >= '0' && bits[i] <= '9') ||
           (bits[i] >= 'a' && bits[i] <= 'f');
    if (!ok)
      return invalid(r.at("init"),
                     "expected \"0x\" and 1 to 16 lower-case hex digits");
    out.kind = StateKind::Initialized;
    out.initBits = std::strtoull(bits.c_str() + 2, nullptr, 16);
  }
  return r.done();
}

ParseResult readArg(const json &value, const std::string &where, ArgDesc &out,
                    std::string &stateName) {
  ObjectReader r(value, where);
  if (value.is_object() && value.find("input") != value.end()) {
    int64_t index = 0;
    r.integer("input", 0, kMaxEntryTensors, index);
    out = {false, size_t(index), Access::Read};
    return r.done();
  }
  std::string access;
  r.string("state", stateName);
  r.string("access", access);
  if (r.error)
    return r.error;
  if (access != "read" && access != "write")
    return invalid(r.at("access"), "expected \"read\" or \"write\"");
  out = {true, 0, access == "write" ? Access::Write : Access::Read};
  return r.done();
}

/// An entry's `"collectives"`: `{"config": "...", "ops": ["...", ...]}`.
ParseResult readCollectives(const json &value, const std::string &where,
                            EntryDesc &out) {
  ObjectReader r(value, where);
  r.string("config", out.collectives.config);
  const json *ops = r.array("ops", kMaxEntryTensors);
  if (r.error)
    return r.error;
  for (size_t i = 0; i < ops->size(); ++i) {
    if (!(*ops)[i].is_string())
      return invalid(item(r.at("ops"), i), "expected a string");
    out.collectives.ops.push_back((*ops)[i].get<std::string>());
  }
  if (out.collectives.empty())
    return invalid(where, "expected a config or ops (omit it otherwise)");
  return r.done();
}

ParseResult readEntry(const json &value, const std::string &where,
                      const std::map<std::string, size_t> &stateIndex,
                      EntryDesc &out) {
  ObjectReader r(value, where);
  r.string("name", out.name);
  const json *args = r.array("args", kMaxEntryTensors);
  const json *inputs = r.array("inputs", kMaxEntryTensors);
  const json *outputs = r.array("outputs", kMaxEntryTensors);
  if (r.error)
    return r.error;
  // Inputs may carry preconditions; outputs may not.
  auto readTensors = [&](const json &list, const char *key, bool isInput,
                         std::vector<TensorDesc> &tensors) -> ParseResult {
    for (size_t i = 0; i < list.size(); ++i) {
      ObjectReader t(list[i], item(r.at(key), i));
      tensors.emplace_back();
      if (ParseResult e = readTensorFields(t, true, isInput, tensors.back()))
        return e;
      if (ParseResult e = t.done())
        return e;
    }
    return {};
  };
  if (ParseResult e = readTensors(*inputs, "inputs", true, out.inputs))
    return e;
  if (ParseResult e = readTensors(*outputs, "outputs", false, out.outputs))
    return e;
  if (const json *c = r.field("collectives", /*optional=*/true))
    if (ParseResult e = readCollectives(*c, r.at("collectives"), out))
      return e;
  for (size_t i = 0; i < args->size(); ++i) {
    ArgDesc arg;
    std::string state;
    std::string at = item(r.at("args"), i);
    if (ParseResult e = readArg((*args)[i], at, arg, state))
      return e;
    if (arg.isState) {
      auto it = stateIndex.find(state);
      if (it == stateIndex.end())
        return invalid(at, "entry '" + out.name + "' uses undeclared state '" +
                               state + "'");
      arg.index = it->second;
    }
    out.args.push_back(arg);
  }
  return r.done();
}

ParseResult readModel(const json &doc, ModelDesc &out) {
  ObjectReader r(doc, "");
  std::string format;
  int64_t version = 0;
  r.string("format", format);
  r.integer("version", 0, INT32_MAX, version);
  if (r.error)
    return r.error;
  if (format != "grove-model")
    return invalid("format", "expected \"grove-model\"");
  if (version != kDescriptorVersion)
    return {ParseStatus::VersionMismatch, "version",
            "model descriptor version " + std::to_string(version) +
                ", this reader reads version " +
                std::to_string(kDescriptorVersion)};
  r.string("module", out.module);
  r.string("target", out.target);
  const json *state = r.array("state", kMaxEntryTensors);
  const json *entries = r.array("entries", kMaxEntryTensors);
  if (r.error)
    return r.error;
  std::map<std::string, size_t> stateIndex;
  for (size_t i = 0; i < state->size(); ++i) {
    out.params.emplace_back();
    if (ParseResult e =
            readState((*state)[i], item("state", i), out.params.back()))
      return e;
    stateIndex.emplace(out.params.back().name, i);
  }
  for (size_t i = 0; i < entries->size(); ++i) {
    out.entries.emplace_back();
    if (ParseResult e = readEntry((*entries)[i], item("entries", i), stateIndex,
                                  out.entries.back()))
      return e;
  }
  return r.done();
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

bool isIndexList(const TensorDesc &t) {
  return t.dtype.code == kDLInt && t.dtype.bits == 32 && t.dtype.lanes == 1 &&
         t.shape.size() == 1 && t.shape[0] == -1;
}

struct PreconditionValidator {
  const EntryDesc &entry;
  size_t k;
  std::string where;

  ParseResult fail(const std::string &message) const {
    return invalid(where, "input '" + entry.inputs[k].name + "': " + message);
  }
  const TensorDesc *input(int64_t i) const {
    return i >= 0 && i < int64_t(entry.inputs.size()) ? &entry.inputs[i]
                                                      : nullptr;
  }
  ParseResult operator()(const BoundPrecondition &p) const {
    if (entry.inputs[k].dtype.code != kDLInt)
      return fail("a bound ('below') needs an integer dtype");
    if (p.bound < 1)
      return fail("'below' needs a bound >= 1");
    return {};
  }
  ParseResult operator()(const EqualDimPrecondition &p) const {
    const TensorDesc &t = entry.inputs[k];
    if (p.dim < 0 || p.dim >= int64_t(t.shape.size()) || t.shape[p.dim] != -1)
      return fail("'equal_dim' names dimension " + std::to_string(p.dim) +
                  ", which is not a dynamic dimension of it");
    const TensorDesc *other = p.input < int64_t(k) ? input(p.input) : nullptr;
    if (!other || p.inputDim < 0 ||
        p.inputDim >= int64_t(other->shape.size()) ||
        other->shape[p.inputDim] != -1)
      return fail("'equal_dim' names input " + std::to_string(p.input) +
                  " dimension " + std::to_string(p.inputDim) +
                  ", which is no dynamic dimension of an earlier input");
    return {};
  }
  ParseResult operator()(const ForestPrecondition &p) const {
    const int64_t self = int64_t(k);
    if (!isIndexList(entry.inputs[k]) || !input(p.children) ||
        !input(p.roots) || !isIndexList(*input(p.children)) ||
        !isIndexList(*input(p.roots)) || p.children == self ||
        p.roots == self || p.children == p.roots || p.arity < 0 ||
        p.arity > INT32_MAX)
      return invalid(where, "entry '" + entry.name +
                                "': the forest of input '" +
                                entry.inputs[k].name +
                                "' needs three distinct i32 inputs of one "
                                "dynamic dimension (offsets, children, roots)");
    return {};
  }
  ParseResult operator()(const ForestNodesPrecondition &p) const {
    const TensorDesc &t = entry.inputs[k];
    const TensorDesc *offsets = input(p.offsets);
    if (!offsets || p.offsets == int64_t(k) ||
        !offsets->find<ForestPrecondition>() || t.shape.empty() ||
        t.shape[0] != -1)
      return invalid(where, "entry '" + entry.name + "': input '" + t.name +
                                "' has 'forest_nodes " +
                                std::to_string(p.offsets) +
                                "', which needs a dynamic dimension 0 and "
                                "another input with a forest precondition");
    return {};
  }
};

ParseResult validateTensor(const TensorDesc &t, const std::string &where,
                           bool isState, std::set<std::string> &names) {
  if (!isValidName(t.name))
    return invalid(where, "invalid name '" + t.name + "'");
  if (isState && isReservedStateName(t.name))
    return invalid(where, "state name '" + t.name +
                              "' is reserved by the safetensors format");
  if (!names.insert(t.name).second)
    return invalid(where, "duplicate name '" + t.name + "'");
  if (!dtypeToken(t.dtype))
    return invalid(where, "'" + t.name + "' has no descriptor dtype");
  if (t.shape.size() > size_t(kMaxRank))
    return invalid(where, "'" + t.name + "' has rank above " +
                              std::to_string(kMaxRank));
  for (int64_t d : t.shape)
    if (d < (isState ? 0 : -1))
      return invalid(where, "'" + t.name + "' has a bad dimension " +
                                std::to_string(d));
  return {};
}

ParseResult validateEntry(const ModelDesc &model, const EntryDesc &e,
                          const std::string &where) {
  std::set<std::string> inputNames, outputNames;
  if (e.args.size() > size_t(kMaxEntryTensors) ||
      e.outputs.size() > size_t(kMaxEntryTensors))
    return invalid(where, "entry '" + e.name + "' has too many tensors");
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    std::string at = item(where + ".inputs", k);
    if (ParseResult r = validateTensor(e.inputs[k], at, false, inputNames))
      return r;
    if (e.inputs[k].preconditions.size() > size_t(kMaxPreconditions))
      return invalid(at + ".preconditions",
                     "input '" + e.inputs[k].name + "' has more than " +
                         std::to_string(kMaxPreconditions) + " preconditions");
    std::set<size_t> kinds;
    for (size_t i = 0; i < e.inputs[k].preconditions.size(); ++i) {
      const Precondition &p = e.inputs[k].preconditions[i];
      std::string pat = item(at + ".preconditions", i);
      if (!std::holds_alternative<EqualDimPrecondition>(p) &&
          !kinds.insert(p.index()).second)
        return invalid(pat, "input '" + e.inputs[k].name + "' has two '" +
                                preconditionKind(p) + "' preconditions");
      if (ParseResult r = std::visit(PreconditionValidator{e, k, pat}, p))
        return r;
    }
  }
  for (size_t k = 0; k < e.outputs.size(); ++k)
    if (ParseResult r = validateTensor(
            e.outputs[k], item(where + ".outputs", k), false, outputNames))
      return r;
  // Every input is handed once, in order; each piece of state at most once.
  size_t nextInput = 0;
  std::set<size_t> used;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const ArgDesc &a = e.args[i];
    std::string at = item(where + ".args", i);
    if (a.isState &&
        (a.index >= model.params.size() || !used.insert(a.index).second))
      return invalid(at, "entry '" + e.name +
                             "' is handed undeclared state or state twice");
    if (!a.isState && a.index != nextInput++)
      return invalid(at, "entry '" + e.name + "' hands input " +
                             std::to_string(a.index) + " out of order");
  }
  if (nextInput != e.inputs.size())
    return invalid(where + ".args", "entry '" + e.name + "' declares " +
                                        std::to_string(e.inputs.size()) +
                                        " inputs but hands " +
                                        std::to_string(nextInput));
  return {};
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

void quote(std::string &os, const std::string &s) {
  os += '"';
  for (char c : s) {
    if (c == '"' || c == '\\')
      os += '\\';
    os += c; // names hold no control characters (isValidName)
  }
  os += '"';
}

void printTensor(std::string &os, const TensorDesc &t) {
  os += "{\"name\":";
  quote(os, t.name);
  os += ",\"dtype\":\"";
  os += dtypeToken(t.dtype);
  os += "\",\"shape\":[";
  for (size_t d = 0; d < t.shape.size(); ++d)
    os += (d ? "," : "") + std::to_string(t.shape[d]);
  os += "]";
}

struct PreconditionPrinter {
  std::string &os;
  void field(const char *key, int64_t v) {
    os += ",\"";
    os += key;
    os += "\":" + std::to_string(v);
  }
  void operator()(const BoundPrecondition &p) { field("bound", p.bound); }
  void operator()(const EqualDimPrecondition &p) {
    field("dim", p.dim);
    field("input", p.input);
    field("input_dim", p.inputDim);
  }
  void operator()(const ForestPrecondition &p) {
    field("children", p.children);
    field("roots", p.roots);
    field("arity", p.arity);
  }
  void operator()(const ForestNodesPrecondition &p) {
    field("offsets", p.offsets);
  }
};

} // namespace

const char *preconditionKind(const Precondition &p) {
  static const char *const kinds[] = {"equal_dim", "below", "forest",
                                      "forest_nodes"};
  static_assert(std::variant_size_v<Precondition> == 4, "one name per kind");
  return kinds[p.index()];
}

bool EntryDesc::writesState() const {
  for (const ArgDesc &a : args)
    if (a.isState && a.access == Access::Write)
      return true;
  return false;
}

ParseResult validateModel(const ModelDesc &model) {
  if (!isValidName(model.module))
    return invalid("module", "invalid module name '" + model.module + "'");
  if (model.target != "host" && model.target != "cuda")
    return invalid("target", "expected \"host\" or \"cuda\"");
  if (model.params.size() > size_t(kMaxEntryTensors) ||
      model.entries.size() > size_t(kMaxEntryTensors))
    return invalid("", "more than " + std::to_string(kMaxEntryTensors) +
                           " pieces of state or entries");
  std::set<std::string> stateNames, entryNames;
  for (size_t i = 0; i < model.params.size(); ++i) {
    const StateDesc &s = model.params[i];
    std::string at = item("state", i);
    if (ParseResult r = validateTensor(s, at, true, stateNames))
      return r;
    // A bool is a byte holding 0 or 1.
    const unsigned bits = s.dtype.code == kDLBoolCode ? 1 : s.dtype.bits;
    if (s.kind == StateKind::Initialized && bits < 64 && s.initBits >> bits)
      return invalid(at + ".init", "state '" + s.name + "' needs at most " +
                                       std::to_string(bits) + " bits");
  }
  for (size_t i = 0; i < model.entries.size(); ++i) {
    const EntryDesc &e = model.entries[i];
    std::string at = item("entries", i);
    if (!isValidName(e.name))
      return invalid(at, "invalid entry name '" + e.name + "'");
    if (!entryNames.insert(e.name).second)
      return invalid(at, "duplicate entry '" + e.name + "'");
    if (ParseResult r = validateEntry(model, e, at))
      return r;
  }
  return {};
}

ParseResult parseModelDescriptor(std::string_view text, ModelDesc &out) {
  out = ModelDesc();
  if (text.rfind("grove-model ", 0) == 0)
    return {ParseStatus::VersionMismatch, "",
            "a text model descriptor (versions up to 5); this reader reads "
            "JSON version " +
                std::to_string(kDescriptorVersion)};
  json doc;
  JsonResult parsed = parseStrictJson(text, kMaxDepth, doc);
  if (parsed.defect == JsonDefect::TooDeep)
    return invalid("", "the model descriptor nests deeper than " +
                           std::to_string(kMaxDepth) + " levels");
  if (parsed.defect == JsonDefect::Invalid)
    return invalid("",
                   "the model descriptor is not valid JSON: " + parsed.detail);
  if (parsed.defect == JsonDefect::DuplicateKey)
    return invalid("",
                   "key \"" + parsed.detail + "\" appears twice in an object");
  if (ParseResult r = readModel(doc, out))
    return r;
  return validateModel(out);
}

std::string printModelDescriptor(const ModelDesc &model) {
  std::string os = "{\"format\":\"grove-model\",\"version\":" +
                   std::to_string(kDescriptorVersion) + ",\"module\":";
  quote(os, model.module);
  os += ",\"target\":";
  quote(os, model.target);
  os += ",\n\"state\":[";
  for (size_t i = 0; i < model.params.size(); ++i) {
    const StateDesc &s = model.params[i];
    os += i ? ",\n" : "\n";
    printTensor(os, s);
    if (s.kind == StateKind::Initialized) {
      char bits[32];
      std::snprintf(bits, sizeof(bits), ",\"init\":\"0x%0*llx\"",
                    static_cast<int>(elementBytes(s.dtype) * 2),
                    static_cast<unsigned long long>(s.initBits));
      os += bits;
    }
    os += "}";
  }
  os += "],\n\"entries\":[";
  for (size_t i = 0; i < model.entries.size(); ++i) {
    const EntryDesc &e = model.entries[i];
    os += i ? ",\n{\"name\":" : "\n{\"name\":";
    quote(os, e.name);
    os += ",\"args\":[";
    for (size_t k = 0; k < e.args.size(); ++k) {
      const ArgDesc &a = e.args[k];
      os += k ? ",\n" : "\n";
      if (a.isState) {
        os += "{\"state\":";
        quote(os, model.params[a.index].name);
        os += a.access == Access::Write ? ",\"access\":\"write\"}"
                                        : ",\"access\":\"read\"}";
      } else {
        os += "{\"input\":" + std::to_string(a.index) + "}";
      }
    }
    os += "],\n\"inputs\":[";
    for (size_t k = 0; k < e.inputs.size(); ++k) {
      const TensorDesc &t = e.inputs[k];
      os += k ? ",\n" : "\n";
      printTensor(os, t);
      if (!t.preconditions.empty()) {
        os += ",\"preconditions\":[";
        for (size_t p = 0; p < t.preconditions.size(); ++p) {
          os += p ? ",{\"kind\":\"" : "{\"kind\":\"";
          os += preconditionKind(t.preconditions[p]);
          os += "\"";
          std::visit(PreconditionPrinter{os}, t.preconditions[p]);
          os += "}";
        }
        os += "]";
      }
      os += "}";
    }
    os += "],\n\"outputs\":[";
    for (size_t k = 0; k < e.outputs.size(); ++k) {
      os += k ? ",\n" : "\n";
      printTensor(os, e.outputs[k]);
      os += "}";
    }
    os += "]";
    if (!e.collectives.empty()) {
      os += ",\n\"collectives\":{\"config\":";
      quote(os, e.collectives.config);
      os += ",\"ops\":[";
      for (size_t k = 0; k < e.collectives.ops.size(); ++k) {
        os += k ? ",\n" : "\n";
        quote(os, e.collectives.ops[k]);
      }
      os += "]}";
    }
    os += "}";
  }
  os += "]}\n";
  return os;
}

bool dtypeFromToken(std::string_view token, DLDataType &out) {
  for (const DTypeToken &d : kDTypes)
    if (token == d.token) {
      out = d.type;
      return true;
    }
  return false;
}

const char *dtypeToken(DLDataType type) {
  for (const DTypeToken &d : kDTypes)
    if (sameType(d.type, type))
      return d.token;
  return nullptr;
}

bool isValidName(std::string_view name) {
  if (name.empty())
    return false;
  for (size_t i = 0; i < name.size();) {
    auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x80) {
      if (c <= 0x20 || c == 0x7f)
        return false;
      ++i;
      continue;
    }
    size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (len == 0 || c > 0xf4 || i + len > name.size())
      return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(name[i + k]) & 0xc0) != 0x80)
        return false;
    // Reject overlong forms, surrogates and code points above U+10FFFF, as
    // strict JSON encoders (nlohmann's included) do.
    auto c1 = static_cast<unsigned char>(name[i + 1]);
    if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) ||
        (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 > 0x8f))
      return false;
    i += len;
  }
  return true;
}

bool isReservedStateName(std::string_view name) {
  return name == "__metadata__";
}

} // namespace grove::schema
