#include "ResultRecord.h"
#include "JsonRead.h"

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <unistd.h>

namespace ciq {

namespace {

bool syncPath(const std::string &path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}

} // namespace

bool writeJsonDurably(const std::string &path, const nlohmann::json &j, std::string &error) {
  std::string dir = llvm::sys::path::parent_path(path).str();
  llvm::sys::fs::create_directories(dir);
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump() << "\n";
    if (!out.flush()) {
      error = "cannot write " + tmp;
      return false;
    }
  }
  if (!syncPath(tmp, O_RDONLY)) {
    error = "cannot fsync " + tmp;
    return false;
  }
  if (auto ec = llvm::sys::fs::rename(tmp, path)) {
    error = "cannot rename " + tmp + " to " + path + ": " + ec.message();
    return false;
  }
  syncPath(dir, O_RDONLY | O_DIRECTORY); // the rename itself survives a crash
  return true;
}

std::optional<nlohmann::json> readJsonFile(const std::string &path) {
  nlohmann::json j;
  std::string error;
  if (!parseJsonFile(path, j, error) || !j.is_object())
    return std::nullopt;
  return j;
}

std::string nodeName() {
  if (const char *n = getenv("SLURMD_NODENAME"); n && *n)
    return n;
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

double nowEpochSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

} // namespace ciq
