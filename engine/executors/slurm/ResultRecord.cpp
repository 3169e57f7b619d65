#include "engine/executors/slurm/ResultRecord.h"
#include "common/FileIO.h"
#include "common/JsonRead.h"

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <unistd.h>

namespace ciq {

bool writeJsonDurably(const std::string &path, const nlohmann::json &j, std::string &error) {
  return writeFileAtomically(path, j.dump() + "\n", error, /*durable=*/true);
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
