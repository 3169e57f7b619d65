#include "common/ProcessTrack.h"
#include "common/FileIO.h"

#include <cerrno>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ciq {

unsigned long long processStartTime(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')'); // the command name may hold spaces and ')'
  if (close == std::string::npos)
    return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  // Fields after the name start at 3 (state); starttime is field 22.
  for (int i = 3; i < 22 && fields >> f; ++i)
    ;
  unsigned long long t = 0;
  fields >> t;
  return t;
}

namespace {

void appendLine(const std::string &file, int pgid) {
  // O_APPEND + one write: records stay whole even with several writers.
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd < 0)
    return;
  std::string line = std::to_string(pgid) + " " + std::to_string(processStartTime(pgid)) + "\n";
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

} // namespace

// Is the group recorded as (pgid, leader start time) still the same group?
// While any member lives, Linux does not hand its id to a new process; once
// the leader is gone, its start time can no longer be checked, but then the
// id stays reserved only as long as members remain.
bool sameGroupAlive(int pgid, unsigned long long start) {
  if (pgid <= 1 || pgid == getpgrp() || kill(-pgid, 0) != 0)
    return false;
  unsigned long long now = processStartTime(pgid);
  return now == 0 || now == start;
}

CompileRegistration::CompileRegistration(const std::string &runDir) {
  if (runDir.empty())
    return;
  std::string dir = runDir + "/procs";
  mkdir(dir.c_str(), 0700);
  file_ = dir + "/" + std::to_string(getpid());
  appendLine(file_, getpgrp());
}

void CompileRegistration::addGroup(int pgid) {
  if (!file_.empty() && pgid > 1)
    appendLine(file_, pgid);
}

CompileRegistration::~CompileRegistration() {
  if (!file_.empty())
    ::unlink(file_.c_str());
}

namespace {

// A record ciq-ptxas wrote (readOwnFile: never another user's, a link, a FIFO).
std::vector<std::pair<int, unsigned long long>> readRecord(int dirFd, const char *name) {
  std::vector<std::pair<int, unsigned long long>> groups;
  std::istringstream in(readOwnFile(name, 4096, dirFd).value_or(""));
  int pgid;
  unsigned long long start;
  // A group whose leader's start time was not known when it was recorded
  // names no one process for sure: left alone.
  while (in >> pgid >> start)
    if (start != 0)
      groups.push_back({pgid, start});
  return groups;
}

} // namespace

int reapCompiles(const std::string &runDir, double waitSeconds) {
  std::string dir = runDir + "/procs";
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirFd < 0)
    return 0;
  DIR *d = fdopendir(dirFd);
  if (!d) {
    ::close(dirFd);
    return 0;
  }
  std::vector<std::pair<int, unsigned long long>> groups;
  std::vector<std::string> files;
  while (dirent *e = readdir(d)) {
    if (e->d_name[0] == '.')
      continue;
    files.push_back(e->d_name);
    for (const auto &g : readRecord(dirFd, e->d_name))
      groups.push_back(g);
  }
  int alive = 0;
  for (auto &[pgid, start] : groups)
    if (sameGroupAlive(pgid, start)) {
      ++alive;
      kill(-pgid, SIGKILL);
    } else {
      pgid = 0;
    }
  for (int i = 0; i < (int)(waitSeconds * 100); ++i) {
    bool any = false;
    for (auto &[pgid, start] : groups)
      any = any || (pgid > 0 && kill(-pgid, 0) == 0);
    if (!any)
      break;
    usleep(10000);
  }
  for (const auto &f : files)
    ::unlinkat(dirFd, f.c_str(), 0);
  closedir(d);
  return alive;
}

} // namespace ciq
