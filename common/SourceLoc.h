// Where a value came from in a file the user wrote (ciq.yaml, a search
// space), for error messages: the config reader fills it, and the code that
// later finds the value wrong (the benchmark's program, a Slurm setting)
// names the place with it.
#pragma once
#include <string>

namespace ciq {

struct SourceLoc {
  std::string file;
  int line = 0;     // 1-based, 0 when unknown
  std::string key;  // dotted path, e.g. "search.pool_size"

  // "ciq.yaml:12: search.pool_size"
  std::string str() const {
    std::string s = file;
    if (line > 0)
      s += ":" + std::to_string(line);
    if (!key.empty())
      s += ": " + key;
    return s;
  }
};

} // namespace ciq
