//===- StrictJson.cpp - JSON as Grove reads it ----------------------------===//

#include "StrictJson.h"

#include <set>
#include <vector>

namespace grove::schema {
namespace {

using json = nlohmann::json;

bool nestingWithin(std::string_view text, int maxDepth) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '{' || c == '[') {
      if (++depth > maxDepth)
        return false;
    } else if (c == '}' || c == ']')
      --depth;
  }
  return true;
}

/// Builds the document as json::parse does and records the first key an
/// object names twice. (json::parse with a callback could check keys too,
/// but its callback parser rescans the parent whenever an inner value
/// closes: quadratic in the entries.)
class StrictSax {
public:
  using Dom = nlohmann::detail::json_sax_dom_parser<json>;
  explicit StrictSax(json &root) : dom_(root, /*allow_exceptions=*/false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) {
    return dom_.number_integer(v);
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return dom_.number_unsigned(v);
  }
  bool number_float(json::number_float_t v, const json::string_t &text) {
    return dom_.number_float(v, text);
  }
  bool string(json::string_t &v) { return dom_.string(v); }
  bool binary(json::binary_t &v) { return dom_.binary(v); }
  bool start_object(std::size_t n) {
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(json::string_t &k) {
    if (!keys_.back().insert(k).second && duplicate_.empty())
      duplicate_ = k;
    return dom_.key(k);
  }
  bool end_object() {
    keys_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return dom_.start_array(n); }
  bool end_array() { return dom_.end_array(); }
  template <class Exception>
  bool parse_error(std::size_t, const std::string &, const Exception &e) {
    error_ = e.what();
    return false;
  }

  const std::string &duplicate() const { return duplicate_; }
  const std::string &error() const { return error_; }

private:
  Dom dom_;
  std::vector<std::set<std::string>> keys_; // of each open object
  std::string duplicate_, error_;
};

} // namespace

JsonResult parseStrictJson(std::string_view text, int maxDepth, json &out) {
  out = json();
  if (!nestingWithin(text, maxDepth))
    return {JsonDefect::TooDeep, ""};
  StrictSax sax(out);
  if (!json::sax_parse(text.begin(), text.end(), &sax,
                       json::input_format_t::json, /*strict=*/true))
    return {JsonDefect::Invalid,
            sax.error().empty() ? "unexpected input" : sax.error()};
  if (!sax.duplicate().empty())
    return {JsonDefect::DuplicateKey, sax.duplicate()};
  return {};
}

} // namespace grove::schema
