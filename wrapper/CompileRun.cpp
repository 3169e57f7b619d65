#include "wrapper/CompileRun.h"

#include "common/AcfStaging.h"
#include "common/DiskFault.h"
#include "common/EnvNames.h"
#include "common/ProcessTrack.h"
#include "common/CompileTemp.h"
#include "wrapper/PtxasStats.h"
#include "wrapper/RegisterCap.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace ciq::wrapper {

double compileTimeout(const CandidateMessage &c) {
  if (c.compileTimeoutSeconds > 0)
    return c.compileTimeoutSeconds;
  return std::strtod(getEnv(env::CompileTimeout).c_str(), nullptr);
}

namespace {

// The default output names nvcc and ptxas use when there is no -o.
std::string defaultOutput(const NvccCommand &cmd) {
  std::string src = baseName(cmd.source());
  std::string stem = src.substr(0, src.rfind('.'));
  for (const auto &a : cmd.argv) {
    if (a == "-cubin" || a == "--cubin")
      return stem + ".cubin";
    if (a == "-fatbin" || a == "--fatbin")
      return stem + ".fatbin";
    if (a == "-c" || a == "--compile" || a == "-dc" || a == "--device-c")
      return stem + ".o";
  }
  return "a.out";
}



// The files named on the command line (-o, -MF) as they were before the
// compile: what a compile killed at the timeout wrote there is removed, so
// the next build cannot take a partial object or depfile for a finished one.
class NamedOutputs {
public:
  explicit NamedOutputs(std::vector<std::string> paths) : paths_(std::move(paths)) {
    for (const auto &p : paths_)
      before_.push_back(state(p));
  }
  void removeWrittenSince() const {
    for (size_t i = 0; i < paths_.size(); ++i)
      if (auto now = state(paths_[i]); now && now != before_[i])
        ::unlink(paths_[i].c_str());
  }

private:
  using State = std::optional<std::tuple<dev_t, ino_t, long, long, off_t>>;
  static State state(const std::string &p) {
    struct stat st;
    if (p.empty() || stat(p.c_str(), &st) != 0)
      return std::nullopt;
    return std::make_tuple(st.st_dev, st.st_ino, (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size);
  }
  std::vector<std::string> paths_;
  std::vector<State> before_;
};

// Whether a compiler cache answered a compile (issue 51 item 10): nvcc
// writes its intermediates (tmpxft_*.ptx, .cubin, .fatbin) to its TMPDIR,
// which is this compile's own folder (CompileTemp), and removes them at its
// end; a cache hit runs no compiler and makes none of them. A cache may
// still preprocess there (sccache runs nvcc -E for its key: .ii, .cudafe1.*
// files), which is no compile. Watched with inotify only for a command with
// a compiler cache in front of the compiler.
class CompilerRanWatch {
public:
  CompilerRanWatch(const std::vector<std::string> &argv, const std::string &tempDir) {
    bool cache = false;
    for (size_t i = 0; i + 1 < argv.size() && !cache; ++i) {
      std::string b = baseName(argv[i]);
      if (b == "nvcc" || b == "ptxas")
        break;
      cache = b == "ccache" || b == "sccache" || b == "buildcache";
    }
    if (!cache || tempDir.empty())
      return;
    fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ >= 0 && inotify_add_watch(fd_, tempDir.c_str(), IN_CREATE) < 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~CompilerRanWatch() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  // True only when the cache answered: watched, and no device-code
  // intermediate was created (an overflowed queue counts as one).
  bool cacheAnswered() const {
    if (fd_ < 0)
      return false;
    alignas(struct inotify_event) char buf[16384];
    for (;;) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return n < 0 && errno == EAGAIN;
      for (ssize_t off = 0; off < n;) {
        auto *ev = reinterpret_cast<const struct inotify_event *>(buf + off);
        if (ev->mask & IN_Q_OVERFLOW)
          return false;
        std::string name = ev->len ? ev->name : "";
        for (const char *ext : {".ptx", ".cubin", ".fatbin"})
          if (name.find(ext) != std::string::npos)
            return false;
        off += sizeof(struct inotify_event) + ev->len;
      }
    }
  }

private:
  int fd_ = -1;
};

} // namespace

// Runs the final command: stdout and stdin are the user's; stderr is read so
// the ptxas -v report can be parsed and, when ciq asked for it, removed.
Outcome runCompiler(const Injection &inj, double timeout, bool wantStats, const std::vector<std::string> &named,
                    CompileRegistration *reg, int engineFd) {
  NamedOutputs outputs(named);
  SubprocessOptions o;
  o.endWhenReadable = engineFd;
  if (reg) // the compiler's own group, so that a killed search's next engine can end it
    o.onStart = [reg](int pgid) { reg->addGroup(pgid); };
  o.captureStdout = false;
  o.captureStderr = true;
  o.inheritStdin = true;
  o.timeoutSeconds = timeout;
  o.setEnv[env::Wrapped] = "1";
  CompileTemp temp; // nvcc's tmpxft_* files go with it, a killed compile's too
  if (!temp.path().empty())
    o.setEnv["TMPDIR"] = temp.path();
  CompilerRanWatch watch(inj.argv, temp.path());
  Outcome out;
  out.run = runSubprocess(inj.argv, o);
  out.cacheHit = out.run.exitCode == 0 && watch.cacheAnswered();
  out.timedOut = out.run.timedOut;
  if (out.timedOut || out.run.endedByWatch)
    outputs.removeWrittenSince();
  if (wantStats) {
    out.kernels = parsePtxasVerbose(out.run.err);
    out.ptxasReported = ptxasReported(out.run.err);
    out.capOverridesUnattributed = markRegisterCapOverrides(out.run.err, out.kernels);
  }
  writeAll(2, inj.addedVerbose ? stripPtxasVerbose(out.run.err) : out.run.err);
  return out;
}

std::string folderOf(const std::string &path) {
  auto s = path.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : path.substr(0, s);
}

int timeoutError(const std::string &source, const CandidateMessage &c, double limit) {
  return fail("the compile of " + (source.empty() ? std::string("this invocation") : source) + " for candidate " +
                  c.candidateId + " ran past the compile timeout of " + std::to_string((int)limit) +
                  " s and its whole process group was ended (TERM, then KILL); raise compile_timeout_s in ciq.yaml "
                  "or CIQ_COMPILE_TIMEOUT (seconds)",
              124);
}

std::vector<std::string> Prepared::folders(const std::string &kept) const {
  std::vector<std::string> f = {folderOf(output)};
  for (const auto &n : namedOutputs)
    f.push_back(folderOf(n));
  f.push_back(temporaryFolder());
  f.push_back(kept);
  return f;
}



Prepared prepare(const Invocation &inv, Parsed &p, const std::string &cwd) {
  Prepared r;
  if (inv.kind == "nvcc") {
    p.nvcc = parseNvcc(inv.args, getEnv("NVCC_PREPEND_FLAGS"), getEnv("NVCC_APPEND_FLAGS"), cwd);
    r.error = p.nvcc.error;
    r.ptxasRuns = p.nvcc.ptxasRuns;
    r.source = absolute(p.nvcc.source(), cwd);
    r.output = absolute(p.nvcc.output.empty() ? defaultOutput(p.nvcc) : p.nvcc.output, cwd);
    r.sassArchs = p.nvcc.sassArchs();
    r.mode.deviceDebug = p.nvcc.deviceDebug;
    r.mode.lineinfo = p.nvcc.lineinfo;
    for (const auto &f : {p.nvcc.output, p.nvcc.depfile})
      if (!f.empty())
        r.namedOutputs.push_back(absolute(f, cwd));
    r.nvccPath = inv.compilerPath;
    std::string dir = inv.compilerPath.substr(0, inv.compilerPath.rfind('/') + 1);
    char buf[PATH_MAX];
    if (realpath(inv.compilerPath.c_str(), buf)) {
      std::string real = buf;
      dir = real.substr(0, real.rfind('/') + 1);
    }
    r.ptxasPath = dir.empty() ? "" : dir + "ptxas";
    r.inject = [&p, &inv](const CandidateMessage &c, bool v) { return injectNvcc(p.nvcc, c, inv.prefix, v); };
  } else {
    p.ptxas = parsePtxas(inv.args, cwd);
    r.error = p.ptxas.error;
    r.ptxasRuns = p.ptxas.ptxasRuns;
    r.versionQuery = p.ptxas.versionQuery;
    r.source = absolute(p.ptxas.input, cwd);
    r.output = absolute(p.ptxas.output, cwd);
    r.namedOutputs = {r.output};
    r.mode.deviceDebug = p.ptxas.deviceDebug;
    r.mode.lineinfo = p.ptxas.lineinfo;
    if (p.ptxas.ptxasRuns)   // not for --version, which has no target (ptxas's default is no choice)
      r.sassArchs = {p.ptxas.arch};
    r.ptxasPath = inv.compilerPath;
    r.inject = [&p, &inv](const CandidateMessage &c, bool v) { return injectPtxas(p.ptxas, c, inv.prefix, v); };
  }
  return r;
}

// ptxas --version in a tuning run: the real text, plus a line naming the
// candidate, so caches keyed on this text (Triton's) compile per candidate.
// With a lock the line names the lock's winner ("ciq lock ..."), so that a
// Triton cache filled without the lock (or with another one) is not reused.
int versionWithCandidate(const Invocation &inv, const CandidateMessage &c, const std::string &what) {
  std::vector<std::string> argv = inv.prefix;
  argv.insert(argv.end(), inv.args.begin(), inv.args.end());
  SubprocessOptions o;
  o.captureStderr = false;
  auto r = runSubprocess(argv, o);
  writeAll(1, r.out);
  if (r.exitCode == 0)
    writeAll(1, "ciq " + what + " " + c.candidateHash + " (" + c.candidateId + ")\n");
  return r.exitCode;
}

// Every ACF of `c` readable, and at a path the compiler gets whole (see
// common/AcfStaging.h); "" or the one problem, naming the file.
std::string stageAcfs(CandidateMessage &c, const std::string &whose) {
  for (auto &a : c.acfs) {
    if (::access(a.path.c_str(), R_OK) != 0)
      return "ACF " + a.path + " (stage " + a.stage + ") of " + whose +
             (errno == ENOENT ? " does not exist" : std::string(" cannot be read: ") + std::strerror(errno)) +
             "; restore it, or remove it from the search space";
    std::string err;
    auto plain = plainAcfPath(a.path, err);
    if (!plain)
      return err;
    a.path = *plain;
  }
  return "";
}


} // namespace ciq::wrapper
