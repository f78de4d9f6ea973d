//===- Safetensors.cpp - safetensors header parsing and writing -----------===//

#include "Safetensors.h"

#include "DType.h"
#include "Error.h"
#include "StrictJson.h"
#include "Tensor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace grove::rt {
namespace {

using json = nlohmann::json;

/// A valid header is {name: {dtype, shape: [...], data_offsets: [...]}} or
/// {"__metadata__": {k: v}}: three levels of nesting at most.
constexpr int kMaxJsonDepth = 3;

grove_status bad(const std::string &origin, const std::string &message) {
  return fail(GROVE_ERROR_BAD_WEIGHTS, origin + ": " + message);
}

/// Non-negative JSON integer that fits in `limit`.
bool getUnsigned(const json &value, uint64_t limit, uint64_t &out) {
  if (value.is_number_unsigned()) {
    out = value.get<uint64_t>();
  } else if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    if (v < 0)
      return false;
    out = static_cast<uint64_t>(v);
  } else {
    return false;
  }
  return out <= limit;
}

std::string describe(const json &value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

grove_status parseTensorEntry(const std::string &name, const json &entry,
                              uint64_t dataSize, const std::string &origin,
                              StTensor &t) {
  const std::string where = "tensor '" + name + "'";
  if (!entry.is_object())
    return bad(origin, where + ": entry is not a JSON object");
  t.name = name;

  auto dtype = entry.find("dtype");
  if (dtype == entry.end())
    return bad(origin, where + ": missing 'dtype'");
  if (!dtype->is_string())
    return bad(origin, where + ": 'dtype' is not a string");
  t.dtypeName = dtype->get<std::string>();
  if (!dtypeFromSafetensors(t.dtypeName, t.dtype))
    return bad(origin, where + ": unknown dtype '" + t.dtypeName + "'");

  auto shape = entry.find("shape");
  if (shape == entry.end())
    return bad(origin, where + ": missing 'shape'");
  if (!shape->is_array())
    return bad(origin, where + ": 'shape' is not an array");
  if (shape->size() > static_cast<size_t>(kMaxRank))
    return bad(origin, where + ": rank " + std::to_string(shape->size()) +
                           " exceeds " + std::to_string(kMaxRank));
  for (const json &dim : *shape) {
    uint64_t d = 0;
    if (!getUnsigned(dim, static_cast<uint64_t>(INT64_MAX), d))
      return bad(origin, where + ": shape value " + describe(dim) +
                             " is not a non-negative 64-bit integer");
    t.shape.push_back(static_cast<int64_t>(d));
  }

  auto offsets = entry.find("data_offsets");
  if (offsets == entry.end())
    return bad(origin, where + ": missing 'data_offsets'");
  if (!offsets->is_array() || offsets->size() != 2 ||
      !getUnsigned((*offsets)[0], UINT64_MAX, t.begin) ||
      !getUnsigned((*offsets)[1], UINT64_MAX, t.end))
    return bad(origin, where + ": 'data_offsets' is not [begin, end] with "
                               "non-negative integers");
  if (t.begin > t.end)
    return bad(origin, where + ": data_offsets begin " +
                           std::to_string(t.begin) + " > end " +
                           std::to_string(t.end));
  if (t.end > dataSize)
    return bad(origin, where + ": data_offsets end " + std::to_string(t.end) +
                           " is past the data section (" +
                           std::to_string(dataSize) + " bytes)");

  size_t count = 0, bytes = 0;
  if (!elementCount(t.shape.data(), t.shape.size(), count) ||
      !byteCount(count, elementBytes(t.dtype), bytes))
    return bad(origin, where + ": byte size of shape " +
                           shapeString(t.shape.data(), t.shape.size()) +
                           " overflows");
  if (bytes != t.end - t.begin)
    return bad(origin, where + ": " + t.dtypeName + " " +
                           shapeString(t.shape.data(), t.shape.size()) +
                           " needs " + std::to_string(bytes) +
                           " bytes but data_offsets span " +
                           std::to_string(t.end - t.begin));
  return GROVE_OK;
}

grove_status parseMetadata(const json &value, const std::string &origin) {
  if (!value.is_object())
    return bad(origin, "'__metadata__' is not a JSON object");
  for (const auto &item : value.items())
    if (!item.value().is_string())
      return bad(origin, "'__metadata__' value for '" + item.key() +
                             "' is not a string");
  return GROVE_OK;
}

std::string nameList(const std::vector<std::string> &names) {
  std::string out;
  const size_t shown = std::min<size_t>(names.size(), 5);
  for (size_t i = 0; i < shown; ++i)
    out += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > shown)
    out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

} // namespace

grove_status parseSafetensorsHeader(std::string_view header, uint64_t dataSize,
                                    const std::string &origin,
                                    std::vector<StTensor> &tensors) {
  tensors.clear();
  // Duplicate keys (a tensor named twice, or a field of one entry) would
  // silently shadow each other in the parsed object; they are refused, as
  // the reference reader does.
  json root;
  schema::JsonResult parsed =
      schema::parseStrictJson(header, kMaxJsonDepth, root);
  if (parsed.defect == schema::JsonDefect::TooDeep)
    return bad(origin, "header JSON is nested deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  if (parsed.defect == schema::JsonDefect::Invalid)
    return bad(origin, "header is not valid JSON: " + parsed.detail);
  if (!root.is_object())
    return bad(origin, "header JSON is not an object");
  if (parsed.defect == schema::JsonDefect::DuplicateKey)
    return bad(origin, "header names '" + parsed.detail + "' twice");

  for (const auto &item : root.items()) {
    if (item.key() == "__metadata__") {
      if (grove_status s = parseMetadata(item.value(), origin))
        return s;
      continue;
    }
    StTensor t;
    if (grove_status s =
            parseTensorEntry(item.key(), item.value(), dataSize, origin, t))
      return s;
    tensors.push_back(std::move(t));
  }

  // Overlap check on byte ranges sorted by start; empty ranges own no bytes.
  std::vector<const StTensor *> byBegin;
  for (const StTensor &t : tensors)
    if (t.end > t.begin)
      byBegin.push_back(&t);
  std::sort(
      byBegin.begin(), byBegin.end(),
      [](const StTensor *a, const StTensor *b) { return a->begin < b->begin; });
  for (size_t i = 1; i < byBegin.size(); ++i)
    if (byBegin[i]->begin < byBegin[i - 1]->end)
      return bad(origin, "tensors '" + byBegin[i - 1]->name + "' and '" +
                             byBegin[i]->name + "' overlap in the file");
  return GROVE_OK;
}

grove_status matchParams(const std::vector<StateDesc> &params,
                         const std::vector<StTensor> &tensors,
                         const std::string &origin,
                         std::vector<size_t> &tensorOfParam) {
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < tensors.size(); ++i)
    byName.emplace(tensors[i].name, i);

  std::vector<std::string> missing, extra;
  std::set<std::string> paramNames;
  tensorOfParam.assign(params.size(), kNotInFile);
  for (size_t i = 0; i < params.size(); ++i) {
    paramNames.insert(params[i].name);
    auto it = byName.find(params[i].name);
    if (it != byName.end())
      tensorOfParam[i] = it->second;
    else if (params[i].kind == StateKind::Weight)
      missing.push_back(params[i].name);
  }
  for (const StTensor &t : tensors)
    if (!paramNames.count(t.name))
      extra.push_back(t.name);
  if (!missing.empty())
    return bad(origin, "missing param" +
                           std::string(missing.size() > 1 ? "s " : " ") +
                           nameList(missing));
  if (!extra.empty())
    return bad(origin, "tensor" + std::string(extra.size() > 1 ? "s " : " ") +
                           nameList(extra) +
                           (extra.size() > 1 ? " are" : " is") +
                           " not a param of the model");

  for (size_t i = 0; i < params.size(); ++i) {
    if (tensorOfParam[i] == kNotInFile)
      continue;
    const TensorDesc &p = params[i];
    const StTensor &t = tensors[tensorOfParam[i]];
    if (!sameDType(p.dtype, t.dtype) || p.shape != t.shape)
      return bad(origin, "param '" + p.name + "': file has " + t.dtypeName +
                             " " + shapeString(t.shape.data(), t.shape.size()) +
                             ", model expects " + dtypeName(p.dtype) + " " +
                             shapeString(p.shape.data(), p.shape.size()));
  }
  return GROVE_OK;
}

grove_status buildSafetensorsHeader(
    const std::vector<StateDesc> &params,
    const std::vector<std::pair<std::string, std::string>> &metadata,
    std::string &prefix) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    auto &meta = header["__metadata__"];
    meta = nlohmann::ordered_json::object();
    for (const auto &[key, value] : metadata)
      meta[key] = value;
  }
  uint64_t offset = 0;
  for (const StateDesc &p : params) {
    const char *dtype = dtypeToSafetensors(p.dtype);
    if (!dtype)
      return fail(GROVE_ERROR_UNSUPPORTED,
                  "param '" + p.name + "' has dtype " + dtypeName(p.dtype) +
                      " which safetensors cannot represent");
    size_t count = 0, bytes = 0;
    elementCount(p.shape.data(), p.shape.size(), count);
    byteCount(count, elementBytes(p.dtype), bytes);
    auto &entry = header[p.name];
    entry["dtype"] = dtype;
    entry["shape"] = p.shape;
    entry["data_offsets"] = {offset, offset + bytes};
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::ordered_json::exception &e) {
    return fail(GROVE_ERROR_INTERNAL,
                std::string("cannot encode safetensors header: ") + e.what());
  }
  // Pad with spaces (valid JSON whitespace) so the data section starts 8-byte
  // aligned, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');
  prefix.clear();
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    prefix.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  prefix += text;
  return GROVE_OK;
}

} // namespace grove::rt
