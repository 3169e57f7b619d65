#include "engine/compile/TorchRoute.h"
#include "common/FileIO.h"
#include "common/FindExecutable.h"
#include "common/Paths.h"
#include "common/Subprocess.h"

#include <cstdlib>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace ciq {

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

// Marks a view, so that a CUDA_HOME naming one (a tune started from inside
// another's environment) is never taken for the real toolkit.
const char *kViewMark = ".ciq-cuda-home-view";

// Links every entry of `from` into `to` except those in `skip`.
bool linkEntries(const std::string &from, const std::string &to, const std::string &skip, std::string &error) {
  std::error_code ec;
  for (fs::directory_iterator it(from, ec), end; it != end && !ec; it.increment(ec)) {
    std::string name = path::filename(it->path()).str();
    if (name == skip)
      continue;
    std::string link = to + "/" + name;
    fs::remove(link);
    if (auto e = fs::create_link(it->path(), link)) {
      error = "cannot link " + link + " to " + it->path() + ": " + e.message();
      return false;
    }
  }
  if (ec) {
    error = "cannot list " + from + ": " + ec.message();
    return false;
  }
  return true;
}

} // namespace

// A folder of this user's, not a link to one.
static bool ownRealDir(const std::string &dir) {
  struct stat st;
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid();
}

// Is `link` a symbolic link whose text is exactly `target`?
static bool linksTo(const std::string &link, const std::string &target) {
  char buf[4096];
  ssize_t n = readlink(link.c_str(), buf, sizeof buf);
  return n > 0 && (size_t)n < sizeof buf && std::string(buf, (size_t)n) == target;
}

// Every entry of `dir` is what linkEntries made from `from` (or `extra`,
// checked by the caller); anything else in it (a link elsewhere, a file or
// folder ciq never makes) and the folder is not ciq's.
static bool onlyLinksFrom(const std::string &dir, const std::string &from, const std::set<std::string> &extra) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end; it != end && !ec; it.increment(ec)) {
    std::string name = path::filename(it->path()).str();
    if (!extra.count(name) && !linksTo(it->path(), from + "/" + name))
      return false;
  }
  return !ec;
}

// A finished view (its mark) of this ciq (bin/nvcc is this ciq-ptxas) over
// this toolkit, holding nothing ciq did not make: `ciq lock env` keeps one
// in the user's cache, which another ciq (moved, rebuilt, removed) may have
// made, and whose entries PyTorch builds run (bin/cicc, bin/ptxas): a link
// there to anything but the toolkit's entry is not followed but replaced.
static bool viewIsCurrent(const std::string &view, const std::string &toolkitRoot) {
  struct stat st;
  std::string mark = view + "/" + kViewMark;
  if (!ownRealDir(view) || !ownRealDir(view + "/bin") || lstat(mark.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  if (!linksTo(view + "/bin/nvcc", wrapperPath()) || !onlyLinksFrom(view, toolkitRoot, {"bin", kViewMark}) ||
      !onlyLinksFrom(view + "/bin", toolkitRoot + "/bin", {"nvcc"}))
    return false;
  llvm::SmallString<256> include, toolkitInclude;
  return !fs::real_path(view + "/include", include) && !fs::real_path(toolkitRoot + "/include", toolkitInclude) &&
         include == toolkitInclude;
}

bool makeCudaHomeView(const std::string &view, const std::string &toolkitRoot, std::string &error) {
  // Made once and never changed while builds may read it (a worker's build
  // beside another's start): built aside, then renamed.
  if (viewIsCurrent(view, toolkitRoot))
    return true;
  std::string tmp = view + ".tmp." + std::to_string(getpid());
  fs::remove_directories(tmp);
  if (auto ec = fs::create_directories(tmp + "/bin")) {
    error = "cannot create " + tmp + "/bin: " + ec.message();
    return false;
  }
  bool ok = linkEntries(toolkitRoot, tmp, "bin", error) && linkEntries(toolkitRoot + "/bin", tmp + "/bin", "nvcc", error);
  if (ok)
    if (auto ec = fs::create_link(wrapperPath(), tmp + "/bin/nvcc")) {
      error = "cannot link " + tmp + "/bin/nvcc to " + wrapperPath() + ": " + ec.message();
      ok = false;
    }
  ok = ok && writeFileAtomically(tmp + "/" + kViewMark, "a CUDA_HOME for PyTorch builds made by ciq; nvcc is ciq-ptxas\n",
                                 error);
  // rename() never replaces a folder that has entries: a current view
  // another ciq finished meanwhile (lit runs tests in parallel) stays as it
  // is, builds may be reading it. A view without its mark (left half-made by
  // a killed ciq) or of another ciq or toolkit is moved aside and replaced.
  if (ok && fs::rename(tmp, view)) {
    if (!viewIsCurrent(view, toolkitRoot)) {
      // A link or file in the view's place is removed itself, never what it names.
      struct stat st;
      if (lstat(view.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
        fs::remove(view);
        fs::rename(tmp, view);
      } else {
        std::string broken = view + ".broken." + std::to_string(getpid());
        if (!fs::rename(view, broken) && !fs::rename(tmp, view))
          fs::remove_directories(broken);
      }
    }
    if (!viewIsCurrent(view, toolkitRoot)) {
      error = "cannot rename " + tmp + " to " + view;
      ok = false;
    }
  }
  fs::remove_directories(tmp);
  return ok;
}

std::string realToolkitRoot(const std::string &realNvcc) {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char *v = getenv(var);
    if (v && *v && fs::exists(std::string(v) + "/bin/nvcc") && !fs::exists(std::string(v) + "/" + kViewMark))
      return v;
  }
  llvm::SmallString<256> real;
  if (realNvcc.empty() || fs::real_path(realNvcc, real))
    return "";
  return path::parent_path(path::parent_path(real)).str();
}

std::map<std::string, std::string> torchEnv(const std::string &runDir, const std::string &standinDir,
                                            const std::string &realNvcc, std::string &note) {
  std::map<std::string, std::string> env;
  env["PYTORCH_NVCC"] = standinDir + "/nvcc";
  env["TORCH_NO_COMPILER_WRAPPER"] = "1";
  std::string root = realToolkitRoot(realNvcc);
  std::string view = runDir + "/cuda-home";
  if (root.empty())
    note = "no CUDA toolkit found for PyTorch's CUDA_HOME (set CUDA_HOME or CIQ_REAL_NVCC): builds without ninja "
           "run <CUDA_HOME>/bin/nvcc past ciq";
  else if (!makeCudaHomeView(view, root, note))
    note = "PyTorch's CUDA_HOME stays the toolkit's: " + note;
  else
    env["CUDA_HOME"] = view;
  return env;
}

namespace {

bool pythonName(const std::string &arg) {
  return path::filename(arg).startswith("python");
}

bool mentions(const std::string &file, const char *what) {
  auto text = readWholeFile(file);
  return text && text->find(what) != std::string::npos;
}

// The setup.py or pyproject.toml a setup.py/pip build command reads.
std::string buildScript(const TuneConfig &cfg) {
  bool pip = false;
  for (size_t i = 0; i < cfg.build.command.size(); ++i) {
    const std::string &a = cfg.build.command[i];
    if (path::filename(a) == "setup.py")
      return absolutePath(a, cfg.buildDir);
    if (path::filename(a).startswith("pip") || (a == "pip" && i > 0 && cfg.build.command[i - 1] == "-m"))
      pip = true;
  }
  if (!pip)
    return "";
  for (const char *f : {"setup.py", "pyproject.toml"})
    if (fs::exists(cfg.buildDir + "/" + f))
      return cfg.buildDir + "/" + f;
  return "";
}

} // namespace

TorchUse detectTorchUse(const TuneConfig &cfg) {
  TorchUse u;
  u.python = "python3";
  if (cfg.build.kind == "command" && !cfg.build.command.empty()) {
    std::string script = buildScript(cfg);
    if (!script.empty() && mentions(script, "cpp_extension")) {
      u.build = true;
      u.file = script;
      u.cudaSources = mentions(script, ".cu");
      if (pythonName(cfg.build.command[0]))
        u.python = cfg.build.command[0];
    }
  }
  if (cfg.benchmark.enabled)
    for (const auto &a : cfg.benchmark.command)
      if (path::extension(a) == ".py" && mentions(absolutePath(a, cfg.benchmark.workingDir.empty()
                                                                       ? cfg.buildDir : cfg.benchmark.workingDir),
                                                  "cpp_extension")) {
        u.jit = true;
        if (u.file.empty())
          u.file = a;
        if (!u.build && pythonName(cfg.benchmark.command[0]))
          u.python = cfg.benchmark.command[0];
      }
  return u;
}

std::string torchProblem(const TorchUse &use, std::string &version) {
  SubprocessOptions o;
  o.timeoutSeconds = 120;
  auto r = runSubprocess({use.python, "-c", "import torch; print(torch.__version__); print(torch.version.cuda)"}, o);
  std::string why = use.file + " builds or loads a PyTorch extension (torch.utils.cpp_extension), but ";
  if (r.spawnFailed)
    return why + use.python + " cannot run (" + r.errorMessage + "); install Python 3 or name the interpreter";
  if (r.exitCode != 0 || r.timedOut) {
    std::string err = r.err;
    while (!err.empty() && err.back() == '\n')
      err.pop_back();
    std::string last = err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1);
    return why + use.python + " cannot import torch (" + (r.timedOut ? "no answer in 120 s" : last) +
           "); install PyTorch with CUDA for that interpreter";
  }
  std::string ver = r.out.substr(0, r.out.find('\n'));
  std::string cuda = r.out.substr(r.out.find('\n') + 1);
  cuda = cuda.substr(0, cuda.find('\n'));
  if (cuda.empty() || cuda == "None")
    return why + "PyTorch " + ver + " of " + use.python +
           " is built without CUDA (torch.version.cuda is None: a CPU wheel), so it cannot build CUDA extensions; "
           "install a CUDA build of PyTorch";
  version = ver + " (CUDA " + cuda + ")";
  return "";
}

} // namespace ciq
