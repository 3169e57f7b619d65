#include "engine/config/YamlUtil.h"

#include <llvm/Support/FileSystem.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

namespace ciq {

std::string YamlReader::where(const YAML::Node &at, const std::string &key) const {
  std::string s = file_;
  if (at.IsDefined() && at.Mark().line >= 0)
    s += ":" + std::to_string(at.Mark().line + 1);
  if (!key.empty())
    s += ": " + key;
  return s;
}

void YamlReader::fail(const YAML::Node &at, const std::string &key, const std::string &what) const {
  throw ConfigError(where(at, key) + ": " + what);
}

void YamlReader::needMap(const YAML::Node &n, const std::string &key) const {
  if (!n.IsMap())
    fail(n, key, "expected a mapping (key: value lines)");
}

void YamlReader::onlyKeys(const YAML::Node &map, const std::string &key,
                          const std::vector<std::string> &allowed) const {
  needMap(map, key);
  for (const auto &kv : map) {
    std::string k = kv.first.as<std::string>();
    bool ok = false;
    for (const auto &a : allowed)
      ok = ok || a == k;
    if (!ok) {
      std::string list;
      for (const auto &a : allowed)
        list += (list.empty() ? "" : ", ") + a;
      fail(kv.first, key.empty() ? k : key + "." + k, "unknown key; expected one of: " + list);
    }
  }
}

std::string YamlReader::str(const YAML::Node &n, const std::string &key) const {
  if (!n.IsScalar())
    fail(n, key, "expected a single value (a string)");
  return n.Scalar();
}

long YamlReader::integer(const YAML::Node &n, const std::string &key, long min, long max) const {
  std::string s = str(n, key);
  char *end = nullptr;
  errno = 0;
  long v = strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || errno)
    fail(n, key, "expected an integer, got '" + s + "'");
  if (v < min || v > max)
    fail(n, key, "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                     ", got " + s);
  return v;
}

double YamlReader::number(const YAML::Node &n, const std::string &key, double min, double max) const {
  std::string s = str(n, key);
  char *end = nullptr;
  errno = 0;
  double v = strtod(s.c_str(), &end);
  if (s.empty() || *end || errno || !std::isfinite(v))
    fail(n, key, "expected a number, got '" + s + "'");
  if (v < min || v > max) {
    char buf[128];
    snprintf(buf, sizeof buf, "expected a number from %g to %g, got %s", min, max, s.c_str());
    fail(n, key, buf);
  }
  return v;
}

bool YamlReader::boolean(const YAML::Node &n, const std::string &key) const {
  bool b;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b))
    fail(n, key, "expected true or false");
  return b;
}

std::vector<std::string> YamlReader::strings(const YAML::Node &n, const std::string &key) const {
  std::vector<std::string> out;
  if (n.IsScalar())
    out.push_back(n.Scalar());
  else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i)
      out.push_back(str(n[i], key + "[" + std::to_string(i) + "]"));
  } else
    fail(n, key, "expected a value or a list of values");
  return out;
}

namespace {

// A document's nodes counted as its readers walk them: an alias is its
// anchor's whole subtree again. yaml-cpp shares an anchor's nodes, so 930
// bytes of aliases of aliases (9 levels of 10: "billion laughs") load at once
// but expand to 10^9 nodes for every walk over them, which hung `ciq sample`
// and `ciq doctor`. The largest built-in space is a few hundred nodes.
constexpr long kMaxExpandedNodes = 100000;

struct Walk {
  const std::string &path;
  long nodes = 0;
  void count(const YAML::Node &n) {
    if (++nodes <= kMaxExpandedNodes)
      return;
    throw ConfigError(path + ":" + std::to_string(n.Mark().line + 1) + ": the document expands to more than " +
                      std::to_string(kMaxExpandedNodes) +
                      " values through its aliases (aliases of aliases, a \"billion laughs\" block); ciq.yaml and "
                      "space files need no such nesting: write the values out or use fewer aliases");
  }
};

// yaml-cpp keeps both pairs of a repeated key and answers a lookup with the
// first, so a second `choice:` or `controls:` block would vanish without a
// word: every mapping of the file is checked, with both keys' lines.
void rejectDuplicateKeys(const YAML::Node &n, Walk &walk, int depth = 0) {
  if (depth > 200) // an alias inside its own anchor: nothing further down is new
    return;
  walk.count(n);
  if (n.IsSequence())
    for (const auto &e : n)
      rejectDuplicateKeys(e, walk, depth + 1);
  if (!n.IsMap())
    return;
  std::map<std::string, int> firstLine;
  for (const auto &kv : n) {
    if (kv.first.IsScalar()) {
      auto [at, fresh] = firstLine.emplace(kv.first.Scalar(), kv.first.Mark().line + 1);
      if (!fresh)
        throw ConfigError(walk.path + ":" + std::to_string(kv.first.Mark().line + 1) + ": duplicate key '" +
                          kv.first.Scalar() + "' (first at line " + std::to_string(at->second) +
                          "); YAML keeps only one of the two: merge them into one '" + kv.first.Scalar() +
                          "' or delete one");
    } else {
      rejectDuplicateKeys(kv.first, walk, depth + 1); // a complex key is walked too
    }
    rejectDuplicateKeys(kv.second, walk, depth + 1);
  }
}

} // namespace

YAML::Node loadYamlFile(const std::string &path) {
  // An ifstream opens a directory and then fails inside yaml-cpp's reader
  // with an exception of the standard library: refuse it here, by name.
  if (llvm::sys::fs::is_directory(path))
    throw ConfigError(path + ": is a directory, not a YAML file (give the file itself with --config)");
  // A FIFO or device in its place would block the open or read without end.
  llvm::sys::fs::file_status st;
  if (!llvm::sys::fs::status(path, st) && llvm::sys::fs::exists(st) &&
      st.type() != llvm::sys::fs::file_type::regular_file)
    throw ConfigError(path + ": not a regular file (a FIFO, socket or device); give the YAML file itself with --config");
  std::ifstream in(path);
  if (!in)
    throw ConfigError(path + ": cannot read the file (check the path given with --config)");
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::ParserException &e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg +
                      "; fix the indentation or quoting there");
  }
  Walk walk{path};
  rejectDuplicateKeys(root, walk);
  return root;
}

} // namespace ciq
