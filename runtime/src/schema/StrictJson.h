//===- StrictJson.h - JSON as Grove reads it ---------------------*- C++
//-*-===//
//
// The one way the runtime and the compiler read JSON (model descriptors,
// safetensors headers): nlohmann's parser without exceptions, refusing
// nesting deeper than a bound before parsing (hostile input cannot build
// huge trees) and keys an object names twice (which the DOM would shadow
// silently).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_SCHEMA_STRICTJSON_H
#define GROVE_SCHEMA_STRICTJSON_H

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace grove::schema {

enum class JsonDefect { None, TooDeep, Invalid, DuplicateKey };

struct JsonResult {
  JsonDefect defect = JsonDefect::None;
  /// TooDeep: empty; Invalid: the parser's message; DuplicateKey: the key.
  std::string detail;
  explicit operator bool() const { return defect != JsonDefect::None; }
};

/// Parses `text` into `out` unless it nests deeper than `maxDepth`, is not
/// JSON, or names a key twice in one object.
JsonResult parseStrictJson(std::string_view text, int maxDepth,
                           nlohmann::json &out);

} // namespace grove::schema

#endif // GROVE_SCHEMA_STRICTJSON_H
