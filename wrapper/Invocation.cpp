#include "wrapper/Invocation.h"

#include "common/EnvNames.h"
#include "common/FindExecutable.h"
#include "common/ProcessTree.h"

#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace ciq::wrapper {
namespace {

std::string kindOf(const std::string &name);
bool isCompilerCache(const std::string &name);
std::string selfExe();
std::string parentCache();
std::string putCiqFirst(const std::string &cache);
bool isCiqPtxasCommand(const char *arg);
std::string compilerBehindCache(const std::string &kind, const std::string &link);
std::string realPath(const std::string &p);

} // namespace

int fail(const std::string &msg, int status) {
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
namespace {
std::string selfExe() {
  if (const char *front = std::getenv(env::FrontExe); front && *front)
    return front;
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, n) : "";
}
} // namespace

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



namespace {
std::string kindOf(const std::string &name) {
  std::string b = baseName(name);
  if (b == "nvcc" || b == "ptxas")
    return b;
  return "";
}
} // namespace

namespace {
bool isCompilerCache(const std::string &name) {
  std::string b = baseName(name);
  return b == "ccache" || b == "sccache" || b == "buildcache";
}
} // namespace

// Stand-ins: the real compiler comes from CIQ_REAL_<TOOL> or PATH minus this file.
std::optional<std::string> findReal(const std::string &tool, std::string &error) {
  std::string var = tool == "ptxas" ? env::RealPtxas : env::RealNvcc;
  std::string self = selfExe();
  std::string wanted = getEnv(var.c_str());
  auto found = wanted.empty() ? findRealCompiler(tool, self) : findExecutable(wanted, self);
  if (found && ciq::isCompilerCache(*found)) {
    error = var + "=" + wanted + " is a compiler cache (" + baseName(realPath(*found)) + "), not the real " + tool +
            ": it would run the next " + tool + " on PATH, this stand-in again; point " + var + " at the real " + tool;
    return std::nullopt;
  }
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
  // Once inside a compile it passed on (a compiler cache behind it runs the
  // next nvcc on PATH: this stand-in, main.cpp) is no loop; more is.
  bool reentry = depth == 1 && getEnv(env::Wrapped) == "1";
  if (depth >= 1 && !reentry) {
    std::string real = tool == "ptxas" ? env::RealPtxas : env::RealNvcc;
    error = "the " + tool + " stand-in called itself again (through PATH or " + real + "); set " + real +
            " to the real " + tool + " (a link named " + tool + " to ccache is none: name the " + tool +
            " it should run, e.g. " + real + "=/usr/local/cuda/bin/" + tool + ")";
    return false;
  }
  setenv(var.c_str(), std::to_string(depth + 1).c_str(), 1);
  return true;
}

// The compiler cache (ccache, sccache) that started this process, or "".
namespace {
std::string parentCache() {
  std::ifstream in("/proc/" + std::to_string(getppid()) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return isCompilerCache(comm) ? comm : "";
}
} // namespace

namespace {
std::string putCiqFirst(const std::string &cache) {
  return "put ciq-ptxas first (CMAKE_CUDA_COMPILER_LAUNCHER=\"ciq-ptxas;" + cache + "\")";
}
} // namespace

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
namespace {
std::string realPath(const std::string &p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

bool isCiqPtxasCommand(const char *arg) {
  auto p = findExecutable(arg);
  return p && isCiqPtxas(*p);
}
} // namespace

namespace {

// Reads ciq-ptxas's own options (--lock, --lock-policy) into `inv`: the
// index of the first argument after them, or -1 with `error`.
int readCiqOptions(int argc, char **argv, Invocation &inv, std::string &error) {
  int i = 1;
  for (; i < argc; ++i) {
    // `ciq-ptxas ciq-ptxas nvcc`: its options are read like ours. A stand-in
    // (ciq-ptxas named nvcc or ptxas, first on PATH inside a tune) is the
    // compiler the launcher form names, not a second launcher.
    if (argv[i][0] != '-' && kindOf(argv[i]).empty() && isCiqPtxasCommand(argv[i]))
      continue;
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
      return -1;
    }
    if (a.rfind("--", 0) == 0) {
      error = "unknown option '" + a + "' (ciq-ptxas takes --lock FILE and --lock-policy error|warn before the compiler)";
      return -1;
    }
    break;
  }
  return i;
}

// The compiler `name` (nvcc or ptxas) resolves to: ciq's own stand-in is
// replaced by the real compiler behind it, a compiler cache by what it runs.
bool resolveCompiler(const char *name, Invocation &inv, std::string &error) {
  inv.kind = kindOf(name);
  // `$CIQ_PTXAS nvcc` inside a tune: `nvcc` on PATH is ciq's own stand-in;
  // the compiler to run is the real one behind it (CIQ_REAL_NVCC, else PATH
  // minus ciq-ptxas), named by its path so no stand-in runs in between.
  if (isCiqPtxasCommand(name)) {
    std::string why;
    auto real = findReal(inv.kind, why);
    if (!real) {
      error = "'" + std::string(name) + "' is ciq-ptxas's own " + inv.kind + " stand-in: " + why;
      return false;
    }
    inv.prefix.back() = *real;
    inv.compilerPath = *real;
    return true;
  }
  auto p = findExecutable(name, selfExe());
  inv.compilerPath = p ? *p : name;
  if (ciq::isCompilerCache(inv.compilerPath))
    inv.compilerPath = compilerBehindCache(inv.kind, inv.compilerPath);
  return true;
}

} // namespace

// Launcher argv: [ciq options] [launchers...] compiler args...
bool parseLauncher(int argc, char **argv, Invocation &inv, std::string &error) {
  int i = readCiqOptions(argc, argv, inv, error);
  if (i < 0)
    return false;
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
  if (compiler >= 0)
    return resolveCompiler(argv[compiler], inv, error);
  return true;
}

// CMAKE_CUDA_COMPILER=<dir>/nvcc, that nvcc a link to ccache (issue 41 item
// 4): the command keeps the link, so ccache still caches, but what ciq reads
// of the compiler (its folder's ptxas and fatbinary for PTX reuse, its
// version) is the nvcc ccache runs: CIQ_REAL_NVCC (the engine sets it), else
// the first nvcc on PATH that is neither a cache nor ciq-ptxas.
namespace {
std::string compilerBehindCache(const std::string &kind, const std::string &link) {
  std::string wanted = getEnv(kind == "ptxas" ? env::RealPtxas : env::RealNvcc);
  if (!wanted.empty())
    if (auto p = findExecutable(wanted); p && !isCiqPtxas(*p) && !ciq::isCompilerCache(*p))
      return *p;
  auto p = findRealCompiler(kind, selfExe());
  return p ? *p : link;
}
} // namespace

int execArgv(const std::vector<std::string> &argv) {
  std::vector<char *> c;
  for (const auto &a : argv)
    c.push_back(const_cast<char *>(a.c_str()));
  c.push_back(nullptr);
  stopBeingSubreaper(); // the compiler in this process's place reaps nothing of ours
  execvp(c[0], c.data());
  return fail("cannot run '" + argv[0] + "': " + std::strerror(errno), 127);
}

void note(const std::string &msg) {
  llvm::WithColor::note(llvm::errs(), "ciq-ptxas") << msg << "\n";
}


} // namespace ciq::wrapper
