// One way to read JSON that came from outside (files, sockets, web answers):
// a bounded parse (size and nesting) and typed field accessors that check
// every type with is_*() and keep the first mismatch as one line naming
// where, which key and what was expected. No reader calls get<T>() or
// value() on untrusted JSON: those throw on a wrong type.
#pragma once
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

constexpr int kMaxJsonDepth = 64;

// Parses text; false with error "<where>: <what is wrong> (at byte N)" for bad
// syntax or nesting deeper than maxDepth (the DOM of a 100,000-deep array
// would recurse through the stack in every later walk over it).
bool parseJson(const std::string &text, const std::string &where, nlohmann::json &out, std::string &error,
               int maxDepth = kMaxJsonDepth);
// Reads a whole file with parseJson; a directory or an unreadable path is an error.
bool parseJsonFile(const std::string &path, nlohmann::json &out, std::string &error,
                   int maxDepth = kMaxJsonDepth);

// "a string", "an integer", ... for the expectation part of a message.
std::string jsonKind(const nlohmann::json &j);

// Typed reads: false with why = "expected X, found Y" (prefixed by the
// index or key inside containers).
bool readJson(const nlohmann::json &j, std::string &out, std::string &why);
bool readJson(const nlohmann::json &j, bool &out, std::string &why);
bool readJson(const nlohmann::json &j, int &out, std::string &why);
bool readJson(const nlohmann::json &j, long &out, std::string &why);
bool readJson(const nlohmann::json &j, unsigned long long &out, std::string &why);
bool readJson(const nlohmann::json &j, double &out, std::string &why);
bool readJson(const nlohmann::json &j, nlohmann::json &out, std::string &why); // any value

template <class T> bool readJson(const nlohmann::json &j, std::vector<T> &out, std::string &why) {
  if (!j.is_array()) {
    why = "expected an array, found " + jsonKind(j);
    return false;
  }
  out.clear();
  for (size_t i = 0; i < j.size(); ++i) {
    T v{};
    if (!readJson(j[i], v, why)) {
      why = "[" + std::to_string(i) + "]: " + why;
      return false;
    }
    out.push_back(std::move(v));
  }
  return true;
}

template <class T> bool readJson(const nlohmann::json &j, std::map<std::string, T> &out, std::string &why) {
  if (!j.is_object()) {
    why = "expected an object, found " + jsonKind(j);
    return false;
  }
  out.clear();
  for (auto it = j.begin(); it != j.end(); ++it) {
    T v{};
    if (!readJson(it.value(), v, why)) {
      why = "\"" + it.key() + "\": " + why;
      return false;
    }
    out.emplace(it.key(), std::move(v));
  }
  return true;
}

// Lenient reads of an optional member of a free-form object (a lock's
// score and extra keys, a result record's notes): the member when `obj` is
// an object holding it with that type, else `fallback`. Never throws, unlike
// value(), which aborts a command on a number where a string belongs.
std::string stringAt(const nlohmann::json &obj, const char *key, const std::string &fallback = "");
std::optional<double> numberAt(const nlohmann::json &obj, const char *key);
// Only when every element is a string; else `fallback`.
std::vector<std::string> stringsAt(const nlohmann::json &obj, const char *key,
                                   const std::vector<std::string> &fallback = {});
// The member when it is an object, else an empty object.
const nlohmann::json &objectAt(const nlohmann::json &obj, const char *key);

// The fields of one object, read in a chain; the first problem stops the
// chain and is kept in error() as "<where>: "<key>": expected ..., found ...".
// An absent (or null) optional field leaves its output unchanged.
class JsonFields {
public:
  JsonFields(const nlohmann::json &obj, std::string where);
  template <class T> JsonFields &opt(const char *key, T &out) { return field(key, out, false); }
  template <class T> JsonFields &need(const char *key, T &out) { return field(key, out, true); }
  // Checks an object member without reading it (sub-objects read with their own JsonFields).
  JsonFields &object(const char *key, const nlohmann::json *&out, bool required = false);
  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }
  const std::string &where() const { return where_; }

private:
  // The member to read, or null (absent, null, or an earlier error; a missing
  // required member sets the error).
  const nlohmann::json *member(const char *key, bool required);
  template <class T> JsonFields &field(const char *key, T &out, bool required) {
    const nlohmann::json *it = member(key, required);
    if (!it)
      return *this;
    T v{};
    std::string why;
    if (!readJson(*it, v, why))
      error_ = where_ + ": \"" + key + "\"" + (why.rfind("[", 0) == 0 || why.rfind("\"", 0) == 0 ? "" : ": ") + why;
    else
      out = std::move(v);
    return *this;
  }
  const nlohmann::json &obj_;
  std::string where_;
  std::string error_;
};

} // namespace ciq
