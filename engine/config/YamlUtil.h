// Reading ciq.yaml and space files with yaml-cpp while keeping, for every
// value, where it came from: each error is "file:line: key: what; what to do".
#pragma once
#include <stdexcept>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace ciq {

// Thrown while reading; caught at the loader's edge and turned into one line.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class YamlReader {
public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}
  const std::string &file() const { return file_; }

  [[noreturn]] void fail(const YAML::Node &at, const std::string &key, const std::string &what) const;
  std::string where(const YAML::Node &at, const std::string &key) const;

  // Checks that a map has only the listed keys.
  void onlyKeys(const YAML::Node &map, const std::string &key, const std::vector<std::string> &allowed) const;
  void needMap(const YAML::Node &n, const std::string &key) const;

  std::string str(const YAML::Node &n, const std::string &key) const;
  long integer(const YAML::Node &n, const std::string &key, long min, long max) const;
  double number(const YAML::Node &n, const std::string &key, double min, double max) const;
  bool boolean(const YAML::Node &n, const std::string &key) const;
  // A scalar or a sequence of scalars, as strings.
  std::vector<std::string> strings(const YAML::Node &n, const std::string &key) const;

private:
  std::string file_;
};

// Loads a YAML file, turning a syntax error into a ConfigError with its line.
YAML::Node loadYamlFile(const std::string &path);

} // namespace ciq
