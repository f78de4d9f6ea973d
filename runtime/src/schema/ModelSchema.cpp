//===- ModelSchema.cpp - Parse and print the model descriptor -------------===//

#include "ModelSchema.h"

#include <charconv>
#include <cstdio>
#include <map>
#include <set>

namespace grove::schema {
namespace {

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

bool parseInt(std::string_view token, int64_t &value) {
  if (token.empty())
    return false;
  const char *end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, value);
  return ec == std::errc() && ptr == end;
}

/// `0x` and 1 to 16 lower-case hex digits.
bool parseBits(std::string_view token, uint64_t &value) {
  if (token.size() < 3 || token.size() > 18 || token.substr(0, 2) != "0x")
    return false;
  for (char c : token.substr(2))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  const char *end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data() + 2, end, value, 16);
  return ec == std::errc() && ptr == end;
}

class Parser {
public:
  explicit Parser(ModelDesc &out) : out(out) {}
  ParseResult run(std::string_view text);

private:
  ParseResult error(const std::string &message) {
    return {ParseStatus::Invalid, lineNo, message};
  }
  ParseResult splitLine(std::string_view line);
  ParseResult parseTensor(const char *keyword, bool allowDynamic,
                          size_t numExtra, TensorDesc &tensor);
  ParseResult parseCount(size_t index, const char *what, int64_t &value);
  ParseResult parseHeader(const std::vector<std::string_view> &lines,
                          size_t &i);
  ParseResult parseState(bool initialized);
  ParseResult parseInput(TensorDesc &tensor);
  ParseResult checkEqualDims(const EntryDesc &entry, const TensorDesc &tensor);
  ParseResult checkForests(const EntryDesc &entry);
  ParseResult parseEntry(const std::vector<std::string_view> &lines, size_t &i);
  ParseResult resolveStateArgs();
  ParseResult next(const std::vector<std::string_view> &lines, size_t &i) {
    lineNo = i + 1;
    return splitLine(lines[i++]);
  }

  ModelDesc &out;
  size_t lineNo = 0;
  std::vector<std::string_view> tokens;
  std::set<std::string> stateNames, entryNames;
  /// State arguments by name until every state line has been read: state
  /// may be declared after the entries that use it.
  struct PendingArg {
    size_t entry, arg, line;
    std::string name;
  };
  std::vector<PendingArg> pending;
};

ParseResult Parser::splitLine(std::string_view line) {
  tokens.clear();
  if (line.empty())
    return error("empty line");
  size_t start = 0;
  while (true) {
    size_t space = line.find(' ', start);
    std::string_view token =
        line.substr(start, space == std::string_view::npos ? line.size() - start
                                                           : space - start);
    if (token.empty())
      return error("tokens must be separated by exactly one space");
    for (char c : token)
      if (c == '\t' || c == '\r' || c == '\0' || c == '\v' || c == '\f')
        return error("unexpected control character");
    tokens.push_back(token);
    if (space == std::string_view::npos)
      return {};
    start = space + 1;
  }
}

ParseResult Parser::parseCount(size_t index, const char *what, int64_t &value) {
  // Bounded so that a corrupted descriptor cannot make a reader reserve
  // absurd amounts of memory.
  if (!parseInt(tokens[index], value) || value < 0 || value > kMaxEntryTensors)
    return error(std::string("bad ") + what + " '" +
                 std::string(tokens[index]) + "'");
  return {};
}

// `KEYWORD NAME DTYPE RANK D0 ... D(RANK-1)` and `numExtra` more tokens.
ParseResult Parser::parseTensor(const char *keyword, bool allowDynamic,
                                size_t numExtra, TensorDesc &tensor) {
  if (tokens[0] != keyword)
    return error(std::string("expected '") + keyword + "' line, got '" +
                 std::string(tokens[0]) + "'");
  if (tokens.size() < 4)
    return error(std::string("'") + keyword +
                 "' needs NAME DTYPE RANK and dimensions");
  if (!isValidName(tokens[1]))
    return error("invalid name '" + std::string(tokens[1]) + "'");
  tensor.name = std::string(tokens[1]);
  if (!dtypeFromToken(tokens[2], tensor.dtype))
    return error("unknown dtype '" + std::string(tokens[2]) + "' for '" +
                 tensor.name + "'");
  int64_t rank = 0;
  if (!parseInt(tokens[3], rank) || rank < 0 || rank > kMaxRank)
    return error("bad rank '" + std::string(tokens[3]) + "' for '" +
                 tensor.name + "'");
  if (tokens.size() != 4 + static_cast<size_t>(rank) + numExtra)
    return error("'" + tensor.name + "' has rank " + std::to_string(rank) +
                 " but " +
                 std::to_string(tokens.size() - 4 -
                                std::min(numExtra, tokens.size() - 4)) +
                 " dimensions");
  tensor.shape.clear();
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = 0;
    std::string_view token = tokens[4 + i];
    if (!parseInt(token, dim) || dim < (allowDynamic ? -1 : 0))
      return error("bad dimension '" + std::string(token) + "' for '" +
                   tensor.name + "'" +
                   (allowDynamic ? "" : " (params must be static)"));
    tensor.shape.push_back(dim);
  }
  return {};
}

// `input NAME DTYPE RANK DIMS... [below N] [equal D INPUT E]...`.
ParseResult Parser::parseInput(TensorDesc &tensor) {
  int64_t rank = 0;
  size_t extra = 0;
  if (tokens.size() >= 4 && parseInt(tokens[3], rank) && rank >= 0 &&
      rank <= kMaxRank && tokens.size() > 4 + static_cast<size_t>(rank))
    extra = tokens.size() - 4 - static_cast<size_t>(rank);
  if (ParseResult r =
          parseTensor("input", /*allowDynamic=*/true, extra, tensor))
    return r;
  for (size_t t = 4 + static_cast<size_t>(rank); t < tokens.size();) {
    std::string_view clause = tokens[t];
    if (clause == "below" && t + 2 <= tokens.size() && tensor.below == 0) {
      if (tensor.dtype.code != kDLInt)
        return error("input '" + tensor.name +
                     "' has a bound ('below') but is not of an integer dtype");
      if (!parseInt(tokens[t + 1], tensor.below) || tensor.below < 1)
        return error("input '" + tensor.name +
                     "' needs 'below N' with N >= 1, got '" +
                     std::string(tokens[t + 1]) + "'");
      t += 2;
      continue;
    }
    if (clause == "forest" && t + 4 <= tokens.size() && !tensor.isForest()) {
      if (!parseInt(tokens[t + 1], tensor.forestChildren) ||
          !parseInt(tokens[t + 2], tensor.forestRoots) ||
          !parseInt(tokens[t + 3], tensor.forestArity) ||
          tensor.forestChildren < 0 || tensor.forestRoots < 0 ||
          tensor.forestArity < 0)
        return error("input '" + tensor.name +
                     "' needs 'forest CHILDREN ROOTS ARITY' with input "
                     "indices and an arity >= 0");
      t += 4;
      continue;
    }
    if (clause == "nodes" && t + 2 <= tokens.size() && tensor.nodesOf < 0) {
      if (!parseInt(tokens[t + 1], tensor.nodesOf) || tensor.nodesOf < 0)
        return error("input '" + tensor.name +
                     "' needs 'nodes OFFSETS' with an input index");
      t += 2;
      continue;
    }
    DimEquality eq;
    if (clause == "equal" && t + 4 <= tokens.size() &&
        parseInt(tokens[t + 1], eq.dim) && parseInt(tokens[t + 2], eq.other) &&
        parseInt(tokens[t + 3], eq.otherDim)) {
      if (eq.dim < 0 || eq.dim >= rank || tensor.shape[eq.dim] != -1)
        return error("input '" + tensor.name + "': 'equal " +
                     std::string(tokens[t + 1]) +
                     " ...' names no dynamic dimension of it");
      tensor.equalDims.push_back(eq);
      t += 4;
      continue;
    }
    return error("input '" + tensor.name +
                 "': expected 'below N', 'equal DIM INPUT DIM', "
                 "'forest CHILDREN ROOTS ARITY' or 'nodes OFFSETS', got '" +
                 std::string(clause) + "'");
  }
  return {};
}

// An input's `equal` clauses name a dynamic dimension of an earlier input.
ParseResult Parser::checkEqualDims(const EntryDesc &entry,
                                   const TensorDesc &tensor) {
  for (const DimEquality &eq : tensor.equalDims) {
    const bool known =
        eq.other >= 0 && eq.other < static_cast<int64_t>(entry.inputs.size());
    const TensorDesc *other = known ? &entry.inputs[eq.other] : nullptr;
    if (!other || eq.otherDim < 0 ||
        eq.otherDim >= static_cast<int64_t>(other->shape.size()) ||
        other->shape[eq.otherDim] != -1)
      return error("input '" + tensor.name + "': 'equal' names input " +
                   std::to_string(eq.other) + " dimension " +
                   std::to_string(eq.otherDim) +
                   ", which is no dynamic dimension of an earlier input");
  }
  return {};
}

// A forest's offsets, children and roots are distinct rank-1 i32 inputs
// of dynamic size; a `nodes` input has a dynamic dimension 0 and names
// such offsets.
ParseResult Parser::checkForests(const EntryDesc &entry) {
  const int64_t count = static_cast<int64_t>(entry.inputs.size());
  auto isIndexList = [&](int64_t k) {
    if (k < 0 || k >= count)
      return false;
    const TensorDesc &t = entry.inputs[k];
    return t.dtype.code == kDLInt && t.dtype.bits == 32 && t.dtype.lanes == 1 &&
           t.shape.size() == 1 && t.shape[0] == -1;
  };
  for (int64_t k = 0; k < count; ++k) {
    const TensorDesc &t = entry.inputs[k];
    if (t.isForest() &&
        (!isIndexList(k) || !isIndexList(t.forestChildren) ||
         !isIndexList(t.forestRoots) || t.forestChildren == k ||
         t.forestRoots == k || t.forestChildren == t.forestRoots))
      return error("entry '" + entry.name + "': the forest of input '" +
                   t.name +
                   "' needs three distinct i32 inputs of one dynamic "
                   "dimension (offsets, children, roots)");
    if (t.nodesOf >= 0 &&
        (t.nodesOf >= count || !entry.inputs[t.nodesOf].isForest() ||
         t.shape.empty() || t.shape[0] != -1))
      return error("entry '" + entry.name + "': input '" + t.name +
                   "' has 'nodes " + std::to_string(t.nodesOf) +
                   "', which needs a dynamic dimension 0 and an input with "
                   "a forest clause");
  }
  return {};
}

ParseResult Parser::parseHeader(const std::vector<std::string_view> &lines,
                                size_t &i) {
  if (ParseResult r = next(lines, i))
    return r;
  int64_t version = 0;
  if (tokens.size() != 2 || tokens[0] != "grove-model" ||
      !parseInt(tokens[1], version))
    return error("expected 'grove-model VERSION'");
  if (version != kDescriptorVersion)
    return {ParseStatus::VersionMismatch, lineNo,
            "model descriptor version " + std::to_string(version) +
                ", this reader reads version " +
                std::to_string(kDescriptorVersion)};
  if (i == lines.size())
    return error("missing 'module NAME' line");
  if (ParseResult r = next(lines, i))
    return r;
  if (tokens.size() != 2 || tokens[0] != "module" || !isValidName(tokens[1]))
    return error("expected 'module NAME'");
  out.module = std::string(tokens[1]);
  // Optional `target NAME` (default host).
  if (i < lines.size() && lines[i].rfind("target ", 0) == 0) {
    if (ParseResult r = next(lines, i))
      return r;
    if (tokens.size() != 2 || (tokens[1] != "host" && tokens[1] != "cuda"))
      return error("expected 'target host' or 'target cuda'");
    out.target = std::string(tokens[1]);
  }
  return {};
}

// `param NAME DTYPE RANK DIMS...` or `state NAME DTYPE RANK DIMS... init
// 0xBITS`
ParseResult Parser::parseState(bool initialized) {
  StateDesc state;
  state.kind = initialized ? StateKind::Initialized : StateKind::Weight;
  if (initialized && (tokens.size() < 6 || tokens[tokens.size() - 2] != "init"))
    return error("'state' needs NAME DTYPE RANK, the dimensions and "
                 "'init 0xBITS'");
  if (ParseResult r =
          parseTensor(initialized ? "state" : "param",
                      /*allowDynamic=*/false, initialized ? 2 : 0, state))
    return r;
  if (initialized) {
    std::string_view keyword = tokens[tokens.size() - 2];
    std::string_view bits = tokens.back();
    unsigned width = state.dtype.bits;
    if (keyword != "init" || !parseBits(bits, state.initBits) ||
        (width < 64 && state.initBits >> width))
      return error("state '" + state.name +
                   "' needs 'init 0xBITS' with at "
                   "most " +
                   std::to_string(width) + " bits, got '" +
                   std::string(keyword) + " " + std::string(bits) + "'");
  }
  if (isReservedStateName(state.name))
    return error("param name '" + state.name +
                 "' is reserved by the safetensors format");
  if (!stateNames.insert(state.name).second)
    return error("duplicate param '" + state.name + "'");
  out.params.push_back(std::move(state));
  return {};
}

// `entry NAME NUM_ARGS NUM_OUTPUTS`, then NUM_ARGS lines `input ...`,
// `read NAME` or `write NAME` in argument order, then the `output` lines.
ParseResult Parser::parseEntry(const std::vector<std::string_view> &lines,
                               size_t &i) {
  if (tokens.size() != 4)
    return error("expected 'entry NAME NUM_ARGS NUM_OUTPUTS'");
  EntryDesc entry;
  if (!isValidName(tokens[1]))
    return error("invalid entry name '" + std::string(tokens[1]) + "'");
  entry.name = std::string(tokens[1]);
  if (!entryNames.insert(entry.name).second)
    return error("duplicate entry '" + entry.name + "'");
  int64_t numArgs = 0, numOutputs = 0;
  if (ParseResult r = parseCount(2, "argument count", numArgs))
    return r;
  if (ParseResult r = parseCount(3, "output count", numOutputs))
    return r;
  if (lines.size() - i < static_cast<size_t>(numArgs + numOutputs))
    return error("entry '" + entry.name + "' declares " +
                 std::to_string(numArgs) + " arguments and " +
                 std::to_string(numOutputs) +
                 " outputs but the descriptor ends first");
  std::set<std::string> inputNames, outputNames, usedState;
  for (int64_t k = 0; k < numArgs; ++k) {
    if (ParseResult r = next(lines, i))
      return r;
    if (tokens[0] == "read" || tokens[0] == "write") {
      if (tokens.size() != 2 || !isValidName(tokens[1]))
        return error("expected '" + std::string(tokens[0]) + " NAME'");
      std::string name(tokens[1]);
      if (!usedState.insert(name).second)
        return error("entry '" + entry.name + "' is handed state '" + name +
                     "' twice");
      ArgDesc arg;
      arg.isState = true;
      arg.access = tokens[0] == "write" ? Access::Write : Access::Read;
      pending.push_back({out.entries.size(), entry.args.size(), lineNo, name});
      entry.args.push_back(arg);
      continue;
    }
    if (tokens[0] != "input")
      return error("expected 'input', 'read' or 'write' line, got '" +
                   std::string(tokens[0]) + "'");
    TensorDesc tensor;
    if (ParseResult r = parseInput(tensor))
      return r;
    if (ParseResult r = checkEqualDims(entry, tensor))
      return r;
    if (!inputNames.insert(tensor.name).second)
      return error("duplicate input '" + tensor.name + "' in entry '" +
                   entry.name + "'");
    entry.args.push_back({false, entry.inputs.size(), Access::Read});
    entry.inputs.push_back(std::move(tensor));
  }
  for (int64_t k = 0; k < numOutputs; ++k) {
    if (ParseResult r = next(lines, i))
      return r;
    TensorDesc tensor;
    if (ParseResult r = parseTensor("output", /*allowDynamic=*/true, 0, tensor))
      return r;
    if (!outputNames.insert(tensor.name).second)
      return error("duplicate output '" + tensor.name + "' in entry '" +
                   entry.name + "'");
    entry.outputs.push_back(std::move(tensor));
  }
  if (ParseResult r = checkForests(entry))
    return r;
  out.entries.push_back(std::move(entry));
  return {};
}

ParseResult Parser::resolveStateArgs() {
  std::map<std::string, size_t> index;
  for (size_t s = 0; s < out.params.size(); ++s)
    index.emplace(out.params[s].name, s);
  for (const PendingArg &p : pending) {
    auto it = index.find(p.name);
    if (it == index.end())
      return {ParseStatus::Invalid, p.line,
              "entry '" + out.entries[p.entry].name +
                  "' uses undeclared state '" + p.name + "'"};
    out.entries[p.entry].args[p.arg].index = it->second;
  }
  return {};
}

ParseResult Parser::run(std::string_view text) {
  if (text.empty())
    return error("model descriptor is empty");
  if (text.back() != '\n')
    return error("model descriptor must end with a newline");
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  size_t i = 0;
  if (ParseResult r = parseHeader(lines, i))
    return r;
  // Body: state and entry blocks in any order.
  while (i < lines.size()) {
    if (ParseResult r = next(lines, i))
      return r;
    ParseResult r;
    if (tokens[0] == "param" || tokens[0] == "state")
      r = parseState(tokens[0] == "state");
    else if (tokens[0] == "entry")
      r = parseEntry(lines, i);
    else
      r = error("unknown line kind '" + std::string(tokens[0]) + "'");
    if (r)
      return r;
  }
  return resolveStateArgs();
}

void printTensor(std::string &os, const char *keyword, const TensorDesc &t) {
  os += keyword;
  os += ' ' + t.name + ' ' + dtypeToken(t.dtype) + ' ' +
        std::to_string(t.shape.size());
  for (int64_t d : t.shape)
    os += ' ' + std::to_string(d);
}

} // namespace

bool EntryDesc::writesState() const {
  for (const ArgDesc &a : args)
    if (a.isState && a.access == Access::Write)
      return true;
  return false;
}

ParseResult parseModelDescriptor(std::string_view text, ModelDesc &out) {
  out = ModelDesc();
  return Parser(out).run(text);
}

std::string printModelDescriptor(const ModelDesc &model) {
  std::string os = "grove-model " + std::to_string(kDescriptorVersion) +
                   "\nmodule " + model.module + '\n';
  // The host is the default target.
  if (model.target != "host")
    os += "target " + model.target + '\n';
  for (const StateDesc &s : model.params) {
    bool init = s.kind == StateKind::Initialized;
    printTensor(os, init ? "state" : "param", s);
    if (init) {
      char bits[32];
      std::snprintf(bits, sizeof(bits), " init 0x%0*llx",
                    static_cast<int>(elementBytes(s.dtype) * 2),
                    static_cast<unsigned long long>(s.initBits));
      os += bits;
    }
    os += '\n';
  }
  for (const EntryDesc &e : model.entries) {
    os += "entry " + e.name + ' ' + std::to_string(e.args.size()) + ' ' +
          std::to_string(e.outputs.size()) + '\n';
    for (const ArgDesc &a : e.args) {
      if (a.isState)
        os += std::string(a.access == Access::Write ? "write " : "read ") +
              model.params[a.index].name;
      else
        printTensor(os, "input", e.inputs[a.index]);
      if (!a.isState && e.inputs[a.index].below > 0)
        os += " below " + std::to_string(e.inputs[a.index].below);
      if (!a.isState && e.inputs[a.index].isForest()) {
        const TensorDesc &t = e.inputs[a.index];
        os += " forest " + std::to_string(t.forestChildren) + ' ' +
              std::to_string(t.forestRoots) + ' ' +
              std::to_string(t.forestArity);
      }
      if (!a.isState && e.inputs[a.index].nodesOf >= 0)
        os += " nodes " + std::to_string(e.inputs[a.index].nodesOf);
      if (!a.isState)
        for (const DimEquality &eq : e.inputs[a.index].equalDims)
          os += " equal " + std::to_string(eq.dim) + ' ' +
                std::to_string(eq.other) + ' ' + std::to_string(eq.otherDim);
      os += '\n';
    }
    for (const TensorDesc &t : e.outputs) {
      printTensor(os, "output", t);
      os += '\n';
    }
  }
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
