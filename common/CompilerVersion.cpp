#include "common/CompilerVersion.h"

#include "common/FileIO.h"
#include "common/Paths.h"
#include "common/Sha256.h"
#include "common/Subprocess.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>

namespace ciq {

std::string parseCompilerVersion(const std::string &text) {
  static const std::regex v(R"(V(\d+\.\d+\.\d+))");
  std::smatch m;
  return std::regex_search(text, m, v) ? m[1].str() : "";
}

std::optional<std::string> compilerVersion(const std::string &path, std::string &error) {
  char buf[PATH_MAX];
  std::string real = realpath(path.c_str(), buf) ? buf : path;
  struct stat st;
  if (stat(real.c_str(), &st) != 0) {
    error = "cannot find the compiler '" + path + "' to check its version";
    return std::nullopt;
  }
  std::string key = sha256Hex(real + "\n" + std::to_string(st.st_mtim.tv_sec) + "." +
                              std::to_string(st.st_mtim.tv_nsec) + "\n" + std::to_string(st.st_size));
  // Only a cache of this user's own is believed: with another user's
  // entries a lock frozen with one release would pass for another.
  std::string unsafe;
  auto dir = cacheDir(unsafe);
  std::string file = dir ? *dir + "/compiler-version/" + key : "";
  if (dir) {
    std::ifstream in(file);
    std::string cached;
    if (in && std::getline(in, cached) && !cached.empty())
      return cached;
  }
  auto r = runSubprocess({real, "--version"});
  std::string version = parseCompilerVersion(r.out);
  if (r.exitCode != 0 || version.empty()) {
    std::string said = r.err.substr(0, r.err.find('\n'));
    error = "'" + real + " --version' printed no release (exit status " + std::to_string(r.exitCode) +
            (said.empty() ? "" : ": " + said) + ")";
    return std::nullopt;
  }
  // Write beside and rename: concurrent compiles never read half a line.
  std::string ignored; // a cache that cannot be written is asked again next time
  if (dir)
    writeFileAtomically(file, version + "\n", ignored);
  return version;
}

} // namespace ciq
