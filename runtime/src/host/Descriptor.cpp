//===- Descriptor.cpp - Model descriptor text parser ----------------------===//

#include "Descriptor.h"

#include "DType.h"
#include "Error.h"

#include <charconv>
#include <set>
#include <string_view>

namespace grove::rt {
namespace {

/// Accepts names made of printable ASCII other than space, or well-formed
/// UTF-8 sequences: names end up as JSON keys in safetensors files, which
/// must be valid UTF-8.
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

bool parseInt(std::string_view token, int64_t &value) {
  if (token.empty())
    return false;
  const char *end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, value);
  return ec == std::errc() && ptr == end;
}

class Parser {
public:
  explicit Parser(ModelDesc &out) : out(out) {}

  grove_status run(std::string_view text);

private:
  grove_status error(const std::string &message) {
    return fail(GROVE_ERROR_INVALID_ARGUMENT, "model descriptor line " +
                                                  std::to_string(lineNo) +
                                                  ": " + message);
  }

  grove_status splitLine(std::string_view line);
  grove_status parseTensor(const char *keyword, bool allowDynamic,
                           TensorDesc &tensor);
  grove_status parseCount(size_t index, const char *what, int64_t &value);

  ModelDesc &out;
  size_t lineNo = 0;
  std::vector<std::string_view> tokens;
};

grove_status Parser::splitLine(std::string_view line) {
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
      return GROVE_OK;
    start = space + 1;
  }
}

grove_status Parser::parseCount(size_t index, const char *what,
                                int64_t &value) {
  // Counts are bounded so that a corrupted descriptor cannot make the runtime
  // reserve absurd amounts of memory.
  if (!parseInt(tokens[index], value) || value < 0 || value > 65535)
    return error(std::string("bad ") + what + " '" +
                 std::string(tokens[index]) + "'");
  return GROVE_OK;
}

// `KEYWORD NAME DTYPE RANK D0 ... D(RANK-1)`
grove_status Parser::parseTensor(const char *keyword, bool allowDynamic,
                                 TensorDesc &tensor) {
  if (tokens[0] != keyword)
    return error(std::string("expected '") + keyword + "' line, got '" +
                 std::string(tokens[0]) + "'");
  if (tokens.size() < 4)
    return error(std::string("'") + keyword +
                 "' needs NAME DTYPE RANK and dimensions");
  if (!isValidName(tokens[1]))
    return error("invalid name '" + std::string(tokens[1]) + "'");
  tensor.name = std::string(tokens[1]);
  if (!dtypeFromDescriptor(tokens[2], tensor.dtype))
    return error("unknown dtype '" + std::string(tokens[2]) + "' for '" +
                 tensor.name + "'");
  int64_t rank = 0;
  if (!parseInt(tokens[3], rank) || rank < 0 || rank > kMaxRank)
    return error("bad rank '" + std::string(tokens[3]) + "' for '" +
                 tensor.name + "'");
  if (tokens.size() != 4 + static_cast<size_t>(rank))
    return error("'" + tensor.name + "' has rank " + std::to_string(rank) +
                 " but " + std::to_string(tokens.size() - 4) + " dimensions");
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
  return GROVE_OK;
}

grove_status Parser::run(std::string_view text) {
  if (text.empty())
    return fail(GROVE_ERROR_INVALID_ARGUMENT, "model descriptor is empty");
  if (text.back() != '\n')
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "model descriptor must end with a newline");

  // Split into lines up front; the entry grammar needs look-ahead by count.
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }

  std::set<std::string> paramNames, entryNames;
  size_t i = 0;
  auto next = [&]() {
    lineNo = i + 1;
    return splitLine(lines[i++]);
  };

  // Header: `grove-model VERSION` then `module NAME`.
  if (grove_status s = next())
    return s;
  int64_t version = 0;
  if (tokens.size() != 2 || tokens[0] != "grove-model" ||
      !parseInt(tokens[1], version))
    return error("expected 'grove-model VERSION'");
  if (version != kDescriptorVersion)
    return fail(GROVE_ERROR_ABI_MISMATCH,
                "model descriptor version " + std::to_string(version) +
                    ", this runtime reads version " +
                    std::to_string(kDescriptorVersion));
  if (i == lines.size())
    return error("missing 'module NAME' line");
  if (grove_status s = next())
    return s;
  if (tokens.size() != 2 || tokens[0] != "module" || !isValidName(tokens[1]))
    return error("expected 'module NAME'");
  out.module = std::string(tokens[1]);

  // Optional `target NAME` (default host).
  if (i < lines.size() && lines[i].rfind("target ", 0) == 0) {
    if (grove_status s = next())
      return s;
    if (tokens.size() != 2 || (tokens[1] != "host" && tokens[1] != "cuda"))
      return error("expected 'target host' or 'target cuda'");
    out.target = std::string(tokens[1]);
  }

  // Body: `param` and `entry` blocks in any order.
  while (i < lines.size()) {
    if (grove_status s = next())
      return s;
    if (tokens[0] == "param") {
      TensorDesc param;
      if (grove_status s = parseTensor("param", /*allowDynamic=*/false, param))
        return s;
      if (!paramNames.insert(param.name).second)
        return error("duplicate param '" + param.name + "'");
      out.params.push_back(std::move(param));
      continue;
    }
    if (tokens[0] != "entry")
      return error("unknown line kind '" + std::string(tokens[0]) + "'");
    if (tokens.size() != 4)
      return error("expected 'entry NAME NUM_INPUTS NUM_OUTPUTS'");
    EntryDesc entry;
    if (!isValidName(tokens[1]))
      return error("invalid entry name '" + std::string(tokens[1]) + "'");
    entry.name = std::string(tokens[1]);
    if (!entryNames.insert(entry.name).second)
      return error("duplicate entry '" + entry.name + "'");
    int64_t numInputs = 0, numOutputs = 0;
    if (grove_status s = parseCount(2, "input count", numInputs))
      return s;
    if (grove_status s = parseCount(3, "output count", numOutputs))
      return s;
    if (lines.size() - i < static_cast<size_t>(numInputs + numOutputs))
      return error("entry '" + entry.name + "' declares " +
                   std::to_string(numInputs) + " inputs and " +
                   std::to_string(numOutputs) +
                   " outputs but the descriptor ends first");
    std::set<std::string> inputNames, outputNames;
    for (int64_t k = 0; k < numInputs + numOutputs; ++k) {
      bool isInput = k < numInputs;
      if (grove_status s = next())
        return s;
      TensorDesc tensor;
      if (grove_status s = parseTensor(isInput ? "input" : "output",
                                       /*allowDynamic=*/true, tensor))
        return s;
      if (!(isInput ? inputNames : outputNames).insert(tensor.name).second)
        return error("duplicate " + std::string(isInput ? "input" : "output") +
                     " '" + tensor.name + "' in entry '" + entry.name + "'");
      (isInput ? entry.inputs : entry.outputs).push_back(std::move(tensor));
    }
    out.entries.push_back(std::move(entry));
  }
  return GROVE_OK;
}

} // namespace

grove_status parseDescriptor(const char *text, ModelDesc &out) {
  if (!text)
    return fail(GROVE_ERROR_INVALID_ARGUMENT, "model descriptor is NULL");
  out = ModelDesc();
  return Parser(out).run(text);
}

} // namespace grove::rt
