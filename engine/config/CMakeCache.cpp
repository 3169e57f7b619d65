#include "engine/config/CMakeCache.h"

#include <fstream>

namespace ciq {

std::map<std::string, CacheEntry> readCMakeCache(const std::string &buildDir) {
  std::map<std::string, CacheEntry> cache;
  std::ifstream in(buildDir + "/CMakeCache.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("//", 0) == 0)
      continue;
    auto colon = line.find(':'), eq = line.find('=');
    if (colon == std::string::npos || eq == std::string::npos || colon > eq)
      continue;
    cache[line.substr(0, colon)] = {line.substr(colon + 1, eq - colon - 1), line.substr(eq + 1)};
  }
  return cache;
}

std::string cacheValue(const std::map<std::string, CacheEntry> &cache, const std::string &name,
                       const std::string &fallback) {
  auto it = cache.find(name);
  return it == cache.end() ? fallback : it->second.value;
}

} // namespace ciq
