#include "engine/winner/LockObjects.h"
#include "engine/compile/CompileLines.h"
#include "common/CommandLine.h"
#include "common/LockMode.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>

namespace ciq {
namespace {

// The lock's winner as ciq-ptxas injects it (wrapper/Inject.cpp): ptxas
// options through -Xptxas, nvcc options, defines.
std::vector<std::string> injected(const CandidateMessage &c) {
  std::vector<std::string> out;
  for (const auto &o : c.ptxasOptions)
    out.push_back("-Xptxas " + o);
  out.insert(out.end(), c.nvccOptions.begin(), c.nvccOptions.end());
  for (const auto &d : c.defines)
    out.push_back("-D" + d);
  for (const auto &a : c.acfs)
    out.push_back((a.stage == "nvcc" ? "--apply-controls=" : "-Xptxas --apply-controls=") + a.path);
  return out;
}

// A compile whose launcher chain has ciq-ptxas --lock <file>: the wrapper's
// own decision for this line (common/LockMode.h).
AppliedObject throughLauncher(const std::vector<std::string> &argv, size_t nvcc, size_t lockAt) {
  AppliedObject o;
  std::string lockFile = lockAt + 1 < nvcc ? argv[lockAt + 1] : "";
  std::string policyName = "error";
  for (size_t i = 0; i + 1 < nvcc; ++i)
    if (argv[i] == "--lock-policy")
      policyName = argv[i + 1];
    else if (argv[i].rfind("--lock-policy=", 0) == 0)
      policyName = argv[i].substr(14);
  o.route = "ciq-ptxas --lock " + lockFile;
  auto line = wrapper::parseNvcc({argv.begin() + nvcc + 1, argv.end()}, "", "", "/");
  std::string dir = llvm::sys::path::parent_path(argv[nvcc]).str();
  BuildMode mode;
  mode.deviceDebug = line.deviceDebug;
  mode.lineinfo = line.lineinfo;
  auto d = wrapper::checkLock(lockFile, wrapper::parseLockPolicy(policyName).value_or(wrapper::LockPolicy::Error),
                              argv[nvcc], dir.empty() ? "ptxas" : dir + "/ptxas", line.sassArchs(),
                              "--lock-policy=warn", mode);
  if (d.defaults) {
    o.note = "no section of the lock is for " + (line.sassArchs().empty() ? std::string("its architecture")
                                                                           : line.sassArchs().front()) +
             ": the compiler defaults";
    return o;
  }
  if (d.apply)
    o.options = injected(d.candidate);
  // Sections per architecture: each architecture's ptxas run gets its own.
  for (const auto &[arch, c] : d.perArch) {
    std::string own;
    for (const auto &a : injected(c))
      own += (own.empty() ? "" : " ") + a;
    o.options.push_back("[" + arch + ": " + (own.empty() ? "the compiler defaults" : own) + "]");
  }
  if (!d.apply)
    o.note = (d.fail ? "the compile is refused: " : "compiled without the lock: ") + d.message;
  return o;
}

} // namespace

std::optional<std::vector<AppliedObject>> lockAppliedObjects(const Lockfile &l, const std::string &lockPath,
                                                             const TuneConfig &cfg, std::string &error) {
  auto lines = realCompileLines(cfg, error);
  if (!lines)
    return std::nullopt;
  std::vector<std::string> lockArgs = lockCompileArgs(l, lockPath);
  std::vector<AppliedObject> out;
  for (const auto &cl : *lines) {
    const auto &argv = cl.argv;
    size_t nvcc = 0;
    while (nvcc < argv.size() && llvm::sys::path::filename(argv[nvcc]) != "nvcc")
      ++nvcc;
    auto lockAt = std::find(argv.begin(), argv.begin() + std::min(nvcc, argv.size()), "--lock");
    AppliedObject o;
    if (nvcc < argv.size() && lockAt != argv.begin() + nvcc) {
      o = throughLauncher(argv, nvcc, lockAt - argv.begin());
    } else {
      for (const auto &a : lockArgs)
        if (std::find(argv.begin(), argv.end(), a) != argv.end())
          o.options.push_back(a);
      o.route = o.options.empty() && !lockArgs.empty() ? "none" : "compile options";
      if (o.route == "none")
        o.note = "neither its compile options nor a ciq-ptxas --lock launcher carry the lock";
    }
    o.source = cl.source;
    out.push_back(o);
  }
  return out;
}

} // namespace ciq
