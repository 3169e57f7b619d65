#include "engine/compile/BuildTreeGuard.h"
#include "common/FileIO.h"
#include "common/ProcessTrack.h"
#include "common/Subprocess.h"

#include <cstdio>

#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <fstream>
#include <sstream>
#include <mutex>
#include <unistd.h>

namespace ciq {
namespace {

// What the signal handler unlinks: fixed storage filled before any build
// starts, read without locks or allocation in the handler.
constexpr int kMaxPaths = 4096;
char *guardedPaths[kMaxPaths];
int guardedCount = 0;
std::mutex guardMu;

void removeGuardedOnSignal() {
  for (int i = 0; i < guardedCount; ++i)
    if (guardedPaths[i])
      ::unlink(guardedPaths[i]);
}

void guardPath(const std::string &p) {
  if (guardedCount < kMaxPaths)
    guardedPaths[guardedCount++] = strdup(p.c_str());
}

} // namespace

std::string candidateObjectsList(const std::string &buildDir) {
  return buildDir + "/CMakeFiles/ciq-candidate-objects.txt";
}

void guardBuildTree(const std::string &buildDir, const std::string &runDir, const std::vector<std::string> &objects,
                    const std::string &socketPath) {
  std::string list = candidateObjectsList(buildDir);
  {
    std::ostringstream out;
    // The engine that owns the list: a live one is never repaired under.
    out << "# ciq engine " << getpid() << " " << processStartTime(getpid()) << "\n";
    // Where its compiles are registered (ProcessTrack.h), for a configure's repair.
    out << "# ciq run dir " << runDir << "\n";
    for (const auto &o : objects)
      out << o << "\n";
    std::string ignored; // as before: a list that cannot be written is found missing by the next guard
    writeFileAtomically(list, out.str(), ignored);
  }
  std::lock_guard<std::mutex> g(guardMu);
  for (const auto &o : objects)
    guardPath(o);
  guardPath(list);
  if (!socketPath.empty())
    guardPath(socketPath); // a waiting compile then fails at once, not after its timeout
  setTerminationCleanup(removeGuardedOnSignal);
}

void releaseBuildTree(const std::string &buildDir) { ::unlink(candidateObjectsList(buildDir).c_str()); }

void repairBuildTree(const std::string &buildDir, const std::string &runDir, std::string &note) {
  std::string list = candidateObjectsList(buildDir);
  std::ifstream in(list);
  if (!in)
    return;
  std::vector<std::string> objects;
  std::string line;
  while (std::getline(in, line)) {
    int pid = 0;
    unsigned long long start = 0;
    if (sscanf(line.c_str(), "# ciq engine %d %llu", &pid, &start) == 2 && pid > 0 &&
        processStartTime(pid) == start)
      return; // that search is still running
    if (!line.empty() && line[0] == '/')
      objects.push_back(line);
  }
  reapCompiles(runDir);
  int removed = 0;
  for (const auto &o : objects)
    if (::unlink(o.c_str()) == 0)
      ++removed;
  ::unlink(list.c_str());
  note = "removed " + std::to_string(removed) + " object(s) of an interrupted ciq search from " + buildDir +
         " (the next build recompiles them with your own flags)";
}

void setFileDate(const std::string &path, long secondsSince1970) {
  const struct timespec t[2] = {{secondsSince1970, 0}, {secondsSince1970, 0}};
  ::utimensat(AT_FDCWD, path.c_str(), t, 0); // a missing file has nothing to date
}

} // namespace ciq
