// A configured build tree's CMakeCache.txt (NAME:TYPE=VALUE lines), read once
// for what ciq needs of it: the source dir, the CUDA compiler, the user's
// settings to configure a twin tree for another worker.
#pragma once
#include <map>
#include <string>

namespace ciq {

struct CacheEntry {
  std::string type;   // BOOL, STRING, PATH, FILEPATH, INTERNAL, STATIC, ...
  std::string value;
};

// Empty when the file is missing or unreadable.
std::map<std::string, CacheEntry> readCMakeCache(const std::string &buildDir);

// The value of one entry, or fallback.
std::string cacheValue(const std::map<std::string, CacheEntry> &cache, const std::string &name,
                       const std::string &fallback = "");

} // namespace ciq
