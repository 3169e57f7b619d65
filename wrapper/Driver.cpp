#include "wrapper/Driver.h"

#include <set>
#include <sys/stat.h>

#include "common/AcfStaging.h"
#include "wrapper/CommandLine.h"
#include "common/DeviceCode.h"
#include "common/DiskFault.h"
#include "wrapper/EngineClient.h"
#include "common/EnvNames.h"
#include "wrapper/Inject.h"
#include "common/InvalidReason.h"
#include "wrapper/LockMode.h"
#include "wrapper/CompilerCrash.h"
#include "wrapper/NarrowArch.h"
#include "wrapper/PtxReuse.h"
#include "common/ProcessTrack.h"
#include "common/ProcessTree.h"
#include "wrapper/PtxasStats.h"
#include "wrapper/RegisterCap.h"
#include "common/Sha256.h"
#include "common/Subprocess.h"

#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace ciq::wrapper {
namespace {

int fail(const std::string &msg, int status = 1) {
  llvm::WithColor::error(llvm::errs(), "ciq-ptxas") << msg << "\n";
  return status;
}

void warn(const std::string &msg) {
  llvm::WithColor::warning(llvm::errs(), "ciq-ptxas") << msg << "\n";
}

std::string baseName(const std::string &p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string getEnv(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

std::string currentDir() {
  char buf[PATH_MAX];
  return getcwd(buf, sizeof buf) ? buf : ".";
}

std::string absolute(const std::string &p, const std::string &cwd) {
  if (p.empty() || p[0] == '/')
    return p;
  return cwd + "/" + p;
}

// The file the user ran (the front, ciq-ptxas or a link/copy of it), which a
// stand-in must never find as "the real compiler".
std::string selfExe() {
  if (const char *front = std::getenv(env::FrontExe); front && *front)
    return front;
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, n) : "";
}

void writeAll(int fd, const std::string &s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    off += n;
  }
}

// What this process was asked to do.
struct Invocation {
  std::string mode;                  // "launcher", "ptxas-standin", "nvcc-standin"
  std::string kind;                  // "nvcc", "ptxas", or "" (a compiler ciq does not know)
  std::vector<std::string> prefix;   // launchers and the compiler, as they will run
  std::string compilerPath;          // the real compiler, resolved
  std::vector<std::string> args;     // the user's arguments after the compiler
  std::string lockPath;
  std::string lockPolicy = "error";
};

std::string kindOf(const std::string &name) {
  std::string b = baseName(name);
  if (b == "nvcc" || b == "ptxas")
    return b;
  return "";
}

bool isCompilerCache(const std::string &name) {
  std::string b = baseName(name);
  return b == "ccache" || b == "sccache" || b == "buildcache";
}

// Stand-ins: the real compiler comes from CIQ_REAL_<TOOL> or PATH minus this file.
std::optional<std::string> findReal(const std::string &tool, std::string &error) {
  std::string var = tool == "ptxas" ? env::RealPtxas : env::RealNvcc;
  std::string self = selfExe();
  std::string wanted = getEnv(var.c_str());
  auto found = findExecutable(wanted.empty() ? tool : wanted, self);
  if (found && isCiqPtxas(*found)) {
    error = (wanted.empty() ? "the " + tool + " found on PATH (" + *found + ")" : var + "=" + wanted) +
            " is ciq-ptxas itself, not the real " + tool + "; set " + var + " to the real " + tool;
    return std::nullopt;
  }
  if (!found) {
    bool isSelf = !wanted.empty() && findExecutable(wanted).has_value();
    error = wanted.empty()
                ? "no real " + tool + " on PATH other than this stand-in (" + self + "); set " + var +
                      " to the real " + tool
                : var + "=" + wanted + (isSelf ? " is this stand-in itself" : " is not an executable file") +
                      "; point it at the real " + tool;
  }
  return found;
}

// Stand-ins mark the environment so a real compiler that turns out to be
// another copy of ciq-ptxas is caught instead of recursing forever.
bool enterStandin(const std::string &tool, std::string &error) {
  std::string var = tool == "ptxas" ? env::StandinPtxasDepth : env::StandinNvccDepth;
  int depth = std::atoi(getEnv(var.c_str()).c_str());
  if (depth >= 1) {
    error = "the " + tool + " stand-in called itself again (through PATH or " +
            (tool == "ptxas" ? env::RealPtxas : env::RealNvcc) + "); set " +
            (tool == "ptxas" ? env::RealPtxas : env::RealNvcc) + " to the real " + tool;
    return false;
  }
  setenv(var.c_str(), std::to_string(depth + 1).c_str(), 1);
  return true;
}

// The compiler cache (ccache, sccache) that started this process, or "".
std::string parentCache() {
  std::ifstream in("/proc/" + std::to_string(getppid()) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return isCompilerCache(comm) ? comm : "";
}

std::string putCiqFirst(const std::string &cache) {
  return "put ciq-ptxas first (CMAKE_CUDA_COMPILER_LAUNCHER=\"ciq-ptxas;" + cache + "\")";
}

// A parent compiler cache would hash ciq-ptxas, not the candidate, and serve
// objects built with other controls: refuse instead of measuring the wrong binary.
std::string cacheParentProblem() {
  std::string cache = parentCache();
  if (cache.empty())
    return "";
  return cache + " runs ciq-ptxas as its compiler, so its cache cannot see the candidate or lock; " +
         putCiqFirst(cache);
}

// ciq-ptxas again (a launcher chain that names it twice): it runs once.
bool isCiqPtxasCommand(const char *arg) {
  auto p = findExecutable(arg);
  return p && isCiqPtxas(*p);
}

// Launcher argv: [ciq options] [launchers...] compiler args...
bool parseLauncher(int argc, char **argv, Invocation &inv, std::string &error) {
  int i = 1;
  for (; i < argc; ++i) {
    if (argv[i][0] != '-' && isCiqPtxasCommand(argv[i]))
      continue; // `ciq-ptxas ciq-ptxas nvcc`: its options are read like ours
    std::string a = argv[i];
    auto value = [&](const std::string &opt, std::string &out) {
      if (a == opt && i + 1 < argc) {
        out = argv[++i];
        return true;
      }
      if (a.rfind(opt + "=", 0) == 0) {
        out = a.substr(opt.size() + 1);
        return true;
      }
      return false;
    };
    if (a == "--") {
      ++i;
      break;
    }
    if (value("--lock", inv.lockPath) || value("--lock-policy", inv.lockPolicy))
      continue;
    if (a == "--lock" || a == "--lock-policy") {
      error = a + " needs a value: ciq-ptxas --lock FILE [--lock-policy error|warn] [launcher...] <nvcc|ptxas> args...";
      return false;
    }
    if (a.rfind("--", 0) == 0) {
      error = "unknown option '" + a + "' (ciq-ptxas takes --lock FILE and --lock-policy error|warn before the compiler)";
      return false;
    }
    break;
  }
  if (i >= argc) {
    error = "no compiler to run; usage: ciq-ptxas [--lock FILE] [--lock-policy error|warn] [launcher...] <nvcc|ptxas> args...";
    return false;
  }
  if (argv[i][0] == '-') {
    // What a cache that took ciq-ptxas for the compiler sends (sccache probes with -E).
    std::string cache = parentCache();
    error = "'" + std::string(argv[i]) + "' where the compiler belongs; usage: ciq-ptxas [--lock FILE] [--lock-policy error|warn] [launcher...] <nvcc|ptxas> args..." +
            (cache.empty() ? "" : "; " + cache + " runs ciq-ptxas as if it were the compiler: " + putCiqFirst(cache));
    return false;
  }
  int compiler = -1;
  for (int k = i; k < argc; ++k)
    if (!kindOf(argv[k]).empty()) {
      compiler = k;
      break;
    }
  int end = compiler >= 0 ? compiler + 1 : i + 1;
  for (int k = i; k < end; ++k)
    if (k == compiler || !isCiqPtxasCommand(argv[k])) // `ciq-ptxas ccache ciq-ptxas nvcc`
      inv.prefix.push_back(argv[k]);
  for (int k = end; k < argc; ++k)
    inv.args.push_back(argv[k]);
  if (compiler >= 0) {
    inv.kind = kindOf(argv[compiler]);
    auto p = findExecutable(argv[compiler], selfExe());
    inv.compilerPath = p ? *p : argv[compiler];
  }
  return true;
}

int execArgv(const std::vector<std::string> &argv) {
  std::vector<char *> c;
  for (const auto &a : argv)
    c.push_back(const_cast<char *>(a.c_str()));
  c.push_back(nullptr);
  stopBeingSubreaper(); // the compiler in this process's place reaps nothing of ours
  execvp(c[0], c.data());
  return fail("cannot run '" + argv[0] + "': " + std::strerror(errno), 127);
}

double compileTimeout(const CandidateMessage &c) {
  if (c.compileTimeoutSeconds > 0)
    return c.compileTimeoutSeconds;
  return std::strtod(getEnv(env::CompileTimeout).c_str(), nullptr);
}

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

struct Outcome {
  SubprocessResult run;
  std::vector<KernelStats> kernels;
  int capOverridesUnattributed = 0;
  bool timedOut = false;
  bool ptxasReported = false;  // a -v report was printed: ptxas ran in this invocation
};

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

// Runs the final command: stdout and stdin are the user's; stderr is read so
// the ptxas -v report can be parsed and, when ciq asked for it, removed.
Outcome runCompiler(const Injection &inj, double timeout, bool wantStats, const std::vector<std::string> &named,
                    CompileRegistration *reg = nullptr, int engineFd = -1) {
  NamedOutputs outputs(named);
  SubprocessOptions o;
  o.endWhenReadable = engineFd; // the engine sends nothing while it waits for the receipt: news is its end
  if (reg) // the compiler's own group, so that a killed search's next engine can end it
    o.onStart = [reg](int pgid) { reg->addGroup(pgid); };
  o.captureStdout = false;
  o.captureStderr = true;
  o.inheritStdin = true;
  o.timeoutSeconds = timeout;
  o.setEnv[env::Wrapped] = "1";
  Outcome out;
  out.run = runSubprocess(inj.argv, o);
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

void note(const std::string &msg) {
  llvm::WithColor::note(llvm::errs(), "ciq-ptxas") << msg << "\n";
}

// The receipt of a candidate built by PTX reuse: its ptxas statistics, the
// device code of the fatbin it made, and the full command it stands for.
void fillReusedReceipt(const ReuseResult &rr, const Injection &inj, Receipt &rc) {
  writeAll(2, inj.addedVerbose ? stripPtxasVerbose(rr.err) : rr.err);
  rc.exitStatus = rr.exitCode;
  rc.status = rr.timedOut           ? reason::CompileTimeout
              : rr.crash.signal != 0 ? reason::CompilerCrash
              : rr.exitCode == 0     ? "ok"
                                     : reason::CompileError;
  rc.crashSignal = rr.crash.signal;
  rc.crashedTool = rr.crash.tool;
  rc.wallMs = rr.wallMs;
  rc.ptxasRan = true;
  // The same statistics as a full compile, the register cap's overrides
  // included: nothing about a candidate's record may depend on whether its
  // PTX was reused.
  if (rc.status == "ok")
    rc.kernels = parsePtxasVerbose(rr.err);
  rc.capOverridesUnattributed = markRegisterCapOverrides(rr.err, rc.kernels);
  rc.finalArgv = inj.argv;
  rc.overriddenUserOptions = inj.overridden;
  rc.skippedControls = inj.skipped;
  rc.deviceCodeSha256 = rr.deviceCodeSha256;
  rc.deviceCodeBytes = rr.deviceCodeBytes;
  rc.ptxReuse = "reused";
}

// A compile (or PTX reuse) that failed, or kept nothing, because a folder it
// writes is full, read-only or failing: the receipt says so, and the engine
// records nothing for the candidate and stops the search (common/DiskFault.h).
void noteDiskFault(Receipt &rc, const std::string &toolOutput, const std::vector<std::string> &folders) {
  if (rc.ioErrno != 0)
    return;
  if (auto f = diskFaultOfFailedTool(toolOutput, folders)) {
    rc.ioErrno = f->err;
    rc.ioPath = f->path;
  }
}

std::string folderOf(const std::string &path) {
  auto s = path.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : path.substr(0, s);
}

// The receipt goes to the engine that asked for the object. When that engine
// is gone the object must not stay in the build tree with a candidate's
// device code in it, however it was made (full compile or PTX reuse).
bool sendReceiptOrRemove(EngineClient &engine, const Receipt &rc, const std::string &output) {
  if (engine.sendReceipt(rc))
    return true;
  if (!output.empty())
    ::unlink(output.c_str());
  return false;
}

int timeoutError(const std::string &source, const CandidateMessage &c, double limit) {
  return fail("the compile of " + (source.empty() ? std::string("this invocation") : source) + " for candidate " +
                  c.candidateId + " ran past the compile timeout of " + std::to_string((int)limit) +
                  " s and its whole process group was ended (TERM, then KILL); raise compile_timeout_s in ciq.yaml "
                  "or CIQ_COMPILE_TIMEOUT (seconds)",
              124);
}

// The parts of one invocation that differ between nvcc and ptxas.
struct Prepared {
  bool ptxasRuns = false;
  bool versionQuery = false;     // ptxas --version in a tuning run
  std::string source, output;    // absolute
  std::vector<std::string> namedOutputs; // -o and -MF as given on the command line, absolute
  std::vector<std::string> sassArchs;
  BuildMode mode;                // -G / -lineinfo of this compile
  std::string nvccPath, ptxasPath;
  std::function<Injection(const CandidateMessage &, bool)> inject;
  std::string error;
  // Where the compile writes: its outputs' folders and the temporary folder
  // (nvcc's intermediate files, ptxas's cubins), plus the kept PTX's.
  std::vector<std::string> folders(const std::string &kept) const {
    std::vector<std::string> f = {folderOf(output)};
    for (const auto &n : namedOutputs)
      f.push_back(folderOf(n));
    f.push_back(temporaryFolder());
    f.push_back(kept);
    return f;
  }
};

// Keeps the parsed command alive for the injection closure.
struct Parsed {
  NvccCommand nvcc;
  PtxasCommand ptxas;
};

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
int versionWithCandidate(const Invocation &inv, const CandidateMessage &c, const std::string &what = "candidate") {
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

int tuningRun(const Invocation &inv, const std::string &socket) {
  std::string cwd = currentDir();
  Parsed parsed;
  Prepared prep = prepare(inv, parsed, cwd);
  if (!prep.error.empty())
    return fail(prep.error);
  if (!prep.ptxasRuns && !prep.versionQuery)
    return execArgv([&] { auto a = inv.prefix; a.insert(a.end(), inv.args.begin(), inv.args.end()); return a; }());
  if (std::string p = cacheParentProblem(); !p.empty())
    return fail(p);

  CompileRequest req;
  req.compiler = inv.kind;
  req.mode = inv.mode;
  req.cwd = cwd;
  req.source = prep.source;
  req.output = prep.output;
  req.argv = inv.prefix;
  req.argv.insert(req.argv.end(), inv.args.begin(), inv.args.end());
  req.pid = getpid();
  req.engineToken = getEnv(env::EngineToken);
  // Written before the engine is even asked: if it was killed, its successor
  // ends this process (and the compiler it starts) before building anything.
  CompileRegistration registration(getEnv(env::RunDir));
  EngineClient engine(socket, socketTimeoutFromEnv());
  auto cand = engine.requestCandidate(req);
  if (!cand && engine.compileUnchanged()) {
    if (!engine.notice().empty())
      warn(engine.notice());
    return execArgv(req.argv);
  }
  if (!cand)
    return fail(engine.error());

  // The tokens ciq_apply_lock() added for an earlier winner are not part of
  // this candidate (the baseline must be the default compile): parse the
  // command again without them.
  Invocation stripped = inv;
  if (!cand->stripArgs.empty()) {
    std::set<std::string> drop(cand->stripArgs.begin(), cand->stripArgs.end());
    stripped.args.clear();
    for (const auto &a : inv.args)
      if (!drop.count(a))
        stripped.args.push_back(a);
    parsed = Parsed{};
    prep = prepare(stripped, parsed, cwd);
    if (!prep.error.empty())
      return fail(prep.error);
  }
  // narrow_architectures: SASS for the measured architecture only (NarrowArch.h).
  if (!cand->narrowTo.empty() && inv.kind == "nvcc") {
    std::vector<std::string> narrowed;
    std::string err;
    if (!narrowNvccArgs(stripped.args, cand->narrowTo, cwd, narrowed, err))
      return fail(err);
    stripped.args = narrowed;
    parsed = Parsed{};
    prep = prepare(stripped, parsed, cwd);
    if (!prep.error.empty())
      return fail(prep.error);
  }

  // PTX reuse reads the user's command as it was, before the injection edits it.
  NvccCommand reuseCmd = parsed.nvcc;
  Receipt rc;
  rc.candidateId = cand->candidateId;
  rc.candidateHash = cand->candidateHash;
  rc.engineToken = cand->engineToken;
  rc.source = prep.source;
  rc.output = prep.output;
  int status = 0;
  if (prep.versionQuery) {
    status = versionWithCandidate(inv, *cand);
    rc.exitStatus = status;
    rc.status = status == 0 ? "ok" : reason::CompileError;
    rc.finalArgv = req.argv;
  } else if (std::string bad = stageAcfs(*cand, "candidate " + cand->candidateId); !bad.empty()) {
    // Checked before launch: ptxas would only say it cannot open the file.
    rc.exitStatus = 1;
    rc.status = reason::CompileError;
    rc.reason = bad;
    rc.finalArgv = req.argv;
    engine.sendReceipt(rc);
    return fail(bad);
  } else {
    Injection inj = prep.inject(*cand, true);
    if (!inj.error.empty())
      return fail(inj.error);
    double limit = compileTimeout(*cand);
    // PTX reuse (PtxReuse.h): a ptxas-only candidate runs ptxas on the kept
    // front end; the first full compile keeps it.
    std::optional<PtxReuse> reuse;
    if (inv.kind == "nvcc")
      reuse.emplace(ReuseContext{prep.nvccPath, cwd, getEnv(env::RunDir), prep.output,
                                 cand->stripArgs.empty() ? inv.args : stripped.args, &reuseCmd, limit});
    std::vector<std::string> candArgs(inj.argv.begin() + inv.prefix.size(), inj.argv.end());
    if (reuse) {
      ReuseResult rr = reuse->tryReuse(*cand, candArgs, cand->needObject);
      if (rr.reused) {
        fillReusedReceipt(rr, inj, rc);
        if (rc.status == reason::CompileError)
          noteDiskFault(rc, rr.err, prep.folders(reuse->folder()));
        status = rr.timedOut ? timeoutError(prep.source, *cand, limit) : rr.exitCode;
        return sendReceiptOrRemove(engine, rc, prep.output) ? status : fail(engine.error());
      }
      if (!rr.note.empty()) {
        note(rr.note);
        noteDiskFault(rc, rr.note, {reuse->folder(), folderOf(prep.output)});
      }
    }
    Injection run = inj;
    if (auto keep = reuse ? reuse->keepArgs(*cand) : std::vector<std::string>{}; !keep.empty()) {
      // The kept files come from nvcc itself: a compiler cache in front of it
      // could answer from its cache and keep nothing.
      run.argv = {prep.nvccPath};
      run.argv.insert(run.argv.end(), candArgs.begin(), candArgs.end());
      run.argv.insert(run.argv.end(), keep.begin(), keep.end());
      rc.ptxReuse = "kept";
    }
    // OpenSSL's first SHA-256 sets up its provider: do that on another core
    // while the compiler runs, not after it.
    std::thread warmHash([] { sha256Hex(""); });
    Outcome out = runCompiler(run, limit, true, prep.namedOutputs, &registration, engine.connectionFd());
    warmHash.join();
    if (out.run.endedByWatch) // nothing to send a receipt to
      return fail("the ciq engine ended during this compile (its connection closed), so the compiler was stopped "
                  "with it; `ciq resume` builds the candidate again");
    if (rc.ptxReuse == "kept" && out.run.exitCode == 0 && !out.timedOut)
      if (std::string n = reuse->keep(candArgs); !n.empty()) {
        note(n);
        noteDiskFault(rc, n, {reuse->folder()});
        rc.ptxReuse = "full";
      }
    rc.exitStatus = out.run.exitCode;
    CompilerCrash crash = detectCompilerCrash(out.run, baseName(inv.compilerPath));
    rc.status = out.timedOut             ? reason::CompileTimeout
                : crash.signal != 0     ? reason::CompilerCrash
                : out.run.exitCode == 0 ? "ok"
                                        : reason::CompileError;
    rc.crashSignal = crash.signal;
    rc.crashedTool = crash.tool;
    rc.wallMs = out.run.wallMs;
    // Only a report ptxas printed is evidence that it ran (with -dlto it
    // does not, at compile time); only a compile that succeeded has stats.
    rc.ptxasRan = out.ptxasReported;
    if (rc.status == "ok")
      rc.kernels = out.kernels;
    else if (rc.status == reason::CompileError)
      noteDiskFault(rc, out.run.err, prep.folders(reuse ? reuse->folder() : ""));
    rc.capOverridesUnattributed = out.capOverridesUnattributed;
    rc.finalArgv = inj.argv;
    rc.overriddenUserOptions = inj.overridden;
    rc.skippedControls = inj.skipped;
    if (out.run.spawnFailed)
      return fail(out.run.errorMessage, 127);
    if (rc.status == "ok") {
      std::string err;
      if (auto dc = readDeviceCode(prep.output, err)) {
        rc.deviceCodeSha256 = dc->sha256;
        rc.deviceCodeBytes = dc->bytes;
      }
    }
    status = out.timedOut ? timeoutError(prep.source, *cand, limit) : out.run.exitCode;
  }
  return sendReceiptOrRemove(engine, rc, prep.output) ? status : fail(engine.error());
}

int lockRun(const Invocation &inv) {
  auto policy = parseLockPolicy(inv.lockPolicy);
  if (!policy)
    return fail("lock policy '" + inv.lockPolicy + "' is not one of error, warn (--lock-policy or CIQ_LOCK_POLICY)");
  std::string cwd = currentDir();
  Parsed parsed;
  Prepared prep = prepare(inv, parsed, cwd);
  auto passThrough = [&] {
    auto a = inv.prefix;
    a.insert(a.end(), inv.args.begin(), inv.args.end());
    return execArgv(a);
  };
  if (!prep.error.empty())
    return fail(prep.error);
  if (!prep.ptxasRuns && !prep.versionQuery)
    return passThrough();
  std::string warnOption = inv.mode == "launcher" ? "--lock-policy=warn" : "CIQ_LOCK_POLICY=warn";
  LockDecision d = checkLock(absolute(inv.lockPath, cwd), *policy, prep.nvccPath, prep.ptxasPath, prep.sassArchs,
                             warnOption, prep.mode);
  if (d.fail)
    return fail(d.message);
  if (d.skip) {
    llvm::WithColor::note(llvm::errs(), "ciq-ptxas") << d.message << "\n";
    return passThrough();
  }
  if (!d.apply) {
    warn(d.message + " (lock policy warn: compiling without the lock)");
    return passThrough();
  }
  if (prep.versionQuery)
    return versionWithCandidate(inv, d.candidate, "lock");
  if (std::string p = cacheParentProblem(); !p.empty())
    return fail(p);
  if (std::string bad = stageAcfs(d.candidate, "the lock " + inv.lockPath); !bad.empty())
    return fail(bad);
  // The tuning run's rendering without its -v: statistics are not needed here,
  // and -v changes only ptxas's record of its own command line, never the
  // SASS that the lock's device-code SHA-256 covers.
  Injection inj = prep.inject(d.candidate, false);
  if (!inj.error.empty())
    return fail(inj.error);
  double limit = compileTimeout(d.candidate);
  if (limit <= 0)
    return execArgv(inj.argv); // nothing to watch: the compiler takes this process's place
  Outcome out = runCompiler(inj, limit, false, prep.namedOutputs);
  if (out.run.spawnFailed)
    return fail(out.run.errorMessage, 127);
  if (out.timedOut)
    return timeoutError(prep.source, d.candidate, limit);
  return out.run.exitCode;
}

} // namespace

int runWrapper(int argc, char **argv) {
  Invocation inv;
  std::string self = baseName(argv[0]);
  std::string error;
  if (self == "ptxas" || self == "nvcc") {
    inv.mode = self + "-standin";
    inv.kind = self;
    if (!enterStandin(self, error))
      return fail(error, 127);
    auto real = findReal(self, error);
    if (!real)
      return fail(error, 127);
    inv.compilerPath = *real;
    inv.prefix = {*real};
    for (int i = 1; i < argc; ++i)
      inv.args.push_back(argv[i]);
  } else {
    inv.mode = "launcher";
    if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
      llvm::outs() << "usage: ciq-ptxas [--lock FILE] [--lock-policy error|warn] [launcher...] <nvcc|ptxas> args...\n"
                      "Runs the compiler unchanged, or with the candidate of a tuning run (CIQ_SOCKET) or a\n"
                      "lockfile's winner (--lock/CIQ_LOCK). See docs/wrapper.md.\n";
      return 0;
    }
    if (argc == 2 && std::string(argv[1]) == "--version") {
      llvm::outs() << "ciq-ptxas " << CIQ_VERSION << " (the compiler's own version: ciq-ptxas <nvcc|ptxas> --version)\n";
      return 0;
    }
    if (!parseLauncher(argc, argv, inv, error))
      return fail(error, 2);
    // An explicit policy is checked even without a lock: a typo must not wait
    // for the day a lock is used.
    if (!parseLockPolicy(inv.lockPolicy))
      return fail("lock policy '" + inv.lockPolicy + "' is not one of error, warn (--lock-policy)", 2);
  }
  // Inside a command ciq-ptxas already injected (a stand-in reached through a launcher): pass through.
  bool wrapped = getEnv(env::Wrapped) == "1" && inv.mode != "launcher";
  std::string socket = getEnv(env::Socket);
  if (inv.lockPath.empty())
    inv.lockPath = getEnv(env::Lock);
  if (getEnv(env::LockPolicy).size() && inv.lockPolicy == "error")
    inv.lockPolicy = getEnv(env::LockPolicy);
  auto passThrough = [&] {
    auto a = inv.prefix;
    a.insert(a.end(), inv.args.begin(), inv.args.end());
    return execArgv(a);
  };
  if (wrapped || inv.kind.empty())
    return passThrough();
  if (!socket.empty())
    return tuningRun(inv, socket);
  if (!inv.lockPath.empty())
    return lockRun(inv);
  return passThrough();
}

} // namespace ciq::wrapper
