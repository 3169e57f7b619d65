#include "common/JsonRead.h"

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ciq {
using nlohmann::json;

namespace {

// A SAX pass that only counts nesting: nlohmann's parser is iterative, but
// the DOM it builds is walked recursively (copy, dump, compare), so depth is
// checked before any DOM exists.
struct DepthCheck : nlohmann::json_sax<json> {
  int depth = 0, maxDepth;
  bool tooDeep = false;
  std::string parseError;
  explicit DepthCheck(int m) : maxDepth(m) {}
  bool enter() {
    if (++depth <= maxDepth)
      return true;
    tooDeep = true;
    return false;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return enter(); }
  bool key(string_t &) override { return true; }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override { return --depth, true; }
  bool parse_error(std::size_t position, const std::string &, const nlohmann::detail::exception &ex) override {
    std::string what = ex.what(); // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    size_t cut = what.find("] ");
    (void)position; // the message names line and column
    parseError = "not valid JSON (" + (cut == std::string::npos ? what : what.substr(cut + 2)) + ")";
    return false;
  }
};

} // namespace

bool parseJson(const std::string &text, const std::string &where, json &out, std::string &error, int maxDepth) {
  DepthCheck check(maxDepth);
  bool ok = json::sax_parse(text, &check, json::input_format_t::json, /*strict=*/true);
  if (!ok || check.tooDeep) {
    error = where + ": " +
            (check.tooDeep ? "JSON nested deeper than " + std::to_string(maxDepth) + " levels"
                           : check.parseError.empty() ? std::string("not valid JSON") : check.parseError);
    return false;
  }
  out = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded()) { // cannot happen after a clean SAX pass; never trust that
    error = where + ": not valid JSON";
    return false;
  }
  return true;
}

bool parseJsonFile(const std::string &path, json &out, std::string &error, int maxDepth) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": is a directory, not a JSON file";
    return false;
  }
  // A FIFO or device in its place would block the open or read without end.
  if (auto st = std::filesystem::status(path, ec); !ec && st.type() != std::filesystem::file_type::regular) {
    error = path + ": not a regular file (a FIFO, socket or device); give the JSON file itself";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot read";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parseJson(ss.str(), path, out, error, maxDepth);
}

std::string jsonKind(const json &j) {
  switch (j.type()) {
  case json::value_t::null: return "null";
  case json::value_t::boolean: return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned: return "an integer";
  case json::value_t::number_float: return "a number";
  case json::value_t::string: return "a string";
  case json::value_t::array: return "an array";
  case json::value_t::object: return "an object";
  default: return j.type_name();
  }
}

static bool mismatch(const char *expected, const json &j, std::string &why) {
  why = std::string("expected ") + expected + ", found " + jsonKind(j);
  return false;
}

bool readJson(const json &j, std::string &out, std::string &why) {
  if (!j.is_string())
    return mismatch("a string", j, why);
  out = j.get_ref<const std::string &>();
  return true;
}

bool readJson(const json &j, bool &out, std::string &why) {
  if (!j.is_boolean())
    return mismatch("true or false", j, why);
  out = j.get<bool>();
  return true;
}

// Integers: an integer JSON number inside the C++ type's range.
template <class T> static bool readInteger(const json &j, T &out, std::string &why) {
  if (j.is_number_unsigned()) {
    auto v = j.get<unsigned long long>();
    if (v > (unsigned long long)std::numeric_limits<T>::max())
      return why = "integer " + std::to_string(v) + " is out of range", false;
    out = (T)v;
    return true;
  }
  if (!j.is_number_integer())
    return mismatch("an integer", j, why);
  long long v = j.get<long long>();
  if (v < (long long)std::numeric_limits<T>::min() || (std::is_signed_v<T> && v > (long long)std::numeric_limits<T>::max()))
    return why = "integer " + std::to_string(v) + " is out of range", false;
  out = (T)v;
  return true;
}

bool readJson(const json &j, int &out, std::string &why) { return readInteger(j, out, why); }
bool readJson(const json &j, long &out, std::string &why) { return readInteger(j, out, why); }
bool readJson(const json &j, unsigned long long &out, std::string &why) { return readInteger(j, out, why); }

bool readJson(const json &j, double &out, std::string &why) {
  if (!j.is_number())
    return mismatch("a number", j, why);
  out = j.get<double>();
  return true;
}

bool readJson(const json &j, json &out, std::string &) {
  out = j;
  return true;
}

std::string stringAt(const json &obj, const char *key, const std::string &fallback) {
  if (!obj.is_object())
    return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get_ref<const std::string &>() : fallback;
}

std::optional<double> numberAt(const json &obj, const char *key) {
  if (!obj.is_object())
    return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number())
    return std::nullopt;
  return it->get<double>();
}

std::vector<std::string> stringsAt(const json &obj, const char *key, const std::vector<std::string> &fallback) {
  std::vector<std::string> out;
  std::string why;
  if (!obj.is_object() || !obj.contains(key) || !readJson(obj[key], out, why))
    return fallback;
  return out;
}

const json &objectAt(const json &obj, const char *key) {
  static const json empty = json::object();
  if (!obj.is_object())
    return empty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : empty;
}

JsonFields::JsonFields(const json &obj, std::string where) : obj_(obj), where_(std::move(where)) {
  if (!obj_.is_object())
    error_ = where_ + ": expected a JSON object, found " + jsonKind(obj_);
}

const json *JsonFields::member(const char *key, bool required) {
  if (!error_.empty())
    return nullptr;
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) {
    if (required)
      error_ = where_ + ": \"" + key + "\": missing";
    return nullptr;
  }
  return &*it;
}

JsonFields &JsonFields::object(const char *key, const json *&out, bool required) {
  static const json empty = json::object();
  out = &empty;
  const json *it = member(key, required);
  if (!it)
    return *this;
  if (!it->is_object()) {
    error_ = where_ + ": \"" + key + "\": expected an object, found " + jsonKind(*it);
    return *this;
  }
  out = it;
  return *this;
}

} // namespace ciq
