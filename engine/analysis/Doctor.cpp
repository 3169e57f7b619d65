#include "engine/analysis/Doctor.h"

#include "engine/measure/GpuState.h"
#include "common/Subprocess.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>
#include <regex>
#include <unistd.h>

namespace ciq {

namespace {

std::optional<std::string> findCudaTool(const std::string &name) {
  if (auto p = findExecutable(name))
    return p;
  for (const char *dir : {"/usr/local/cuda/bin", "/opt/cuda/bin"}) {
    std::string p = std::string(dir) + "/" + name;
    if (llvm::sys::fs::can_execute(p))
      return p;
  }
  return std::nullopt;
}

// "release 13.0, V13.0.88" from `<tool> --version`.
std::string cudaVersion(const std::string &tool) {
  SubprocessOptions o;
  o.timeoutSeconds = 30;
  o.mergeStderrIntoStdout = true;
  auto r = runSubprocess({tool, "--version"}, o);
  std::smatch m;
  static const std::regex re("release ([0-9.]+), V([0-9.]+)");
  if (std::regex_search(r.out, m, re))
    return "release " + m.str(1) + ", V" + m.str(2);
  return "version not recognised";
}

DoctorCheck toolCheck(const std::string &name) {
  DoctorCheck c{name};
  auto p = findCudaTool(name);
  if (!p) {
    c.status = DoctorCheck::Fail;
    c.detail = "not found on PATH or in /usr/local/cuda/bin";
    c.fix = "install the CUDA toolkit and put its bin/ on PATH";
    return c;
  }
  c.detail = *p + " (" + cudaVersion(*p) + ")";
  return c;
}

std::string firstLine(const std::string &s) {
  return llvm::StringRef(s).trim().split('\n').first.str();
}

} // namespace

DoctorCheck checkNvcc() { return toolCheck("nvcc"); }
DoctorCheck checkPtxas() { return toolCheck("ptxas"); }

DoctorCheck checkApplyControls() {
  DoctorCheck c{"ptxas --apply-controls"};
  auto ptxas = findCudaTool("ptxas");
  if (!ptxas) {
    c.status = DoctorCheck::Fail;
    c.detail = "ptxas not found";
    c.fix = "install the CUDA toolkit";
    return c;
  }
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("ciq-doctor", dir)) {
    c.status = DoctorCheck::Fail;
    c.detail = "cannot create a temporary directory for the probe";
    c.fix = "set TMPDIR to a writable directory";
    return c;
  }
  std::string ptx = (dir + "/probe.ptx").str(), acf = (dir + "/garbage.acf").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream a(acf, ec);
    a << "not an advanced controls file";
  }
  SubprocessOptions o;
  o.timeoutSeconds = 60;
  o.mergeStderrIntoStdout = true;
  // The first architecture this ptxas still compiles for (old ones get dropped).
  SubprocessResult r;
  std::string arch;
  // Each with the oldest PTX ISA that knows it, so older toolkits parse it too.
  const std::pair<const char *, const char *> targets[] = {
      {"sm_90", "7.8"}, {"sm_100", "8.6"}, {"sm_120", "8.7"}, {"sm_80", "7.0"}, {"sm_75", "6.3"}};
  for (const auto &[candidate, isa] : targets) {
    arch = candidate;
    std::error_code ec;
    llvm::raw_fd_ostream p(ptx, ec);
    p << ".version " << isa << "\n.target " << arch
      << "\n.address_size 64\n.visible .entry ciq_probe() { ret; }\n";
    p.close();
    r = runSubprocess({*ptxas, "-arch=" + arch, ptx, "-o", (dir + "/probe.cubin").str(),
                       "--apply-controls", acf}, o);
    if (!llvm::StringRef(r.out).contains("is not defined for option"))
      break;
  }
  llvm::sys::fs::remove_directories(dir);
  std::string out = firstLine(r.out);
  llvm::StringRef text(r.out);
  if (r.spawnFailed || r.timedOut) {
    c.status = DoctorCheck::Fail;
    c.detail = "the probe did not run (" + (r.timedOut ? std::string("timed out") : r.errorMessage) + ")";
    c.fix = "check that " + *ptxas + " runs";
  } else if (text.contains_insensitive("unknown option")) {
    c.status = DoctorCheck::Warn;
    c.detail = "this ptxas rejects the option (\"" + out + "\")";
    c.fix = "ACF controls need a ptxas that accepts --apply-controls (documented from CUDA "
            "13.3); option controls still work";
  } else if (r.exitCode == 0 || text.contains("garbage.acf")) {
    // The option was parsed and the file read: only its bytes were refused.
    c.detail = r.exitCode == 0 ? "accepted (the probe compiled)"
                               : "accepted: it reads the file and refuses garbage (\"" + out + "\")";
  } else {
    c.status = DoctorCheck::Fail;
    c.detail = "the probe on " + arch + " was inconclusive (\"" + out + "\")";
    c.fix = "run ptxas by hand with --apply-controls to see why";
  }
  return c;
}

DoctorCheck checkCmake(const std::string &buildDir, const std::string &notNeeded) {
  DoctorCheck c{"cmake"};
  auto cmake = findExecutable("cmake");
  if (!cmake) {
    c.detail = "not found on PATH";
    if (!notNeeded.empty()) { // a Makefile project tunes without it (issue 41)
      c.detail += " (not needed: " + notNeeded + ")";
      return c;
    }
    c.status = DoctorCheck::Fail;
    c.fix = "install CMake 3.20 or newer";
    return c;
  }
  SubprocessOptions o;
  o.timeoutSeconds = 30;
  auto r = runSubprocess({*cmake, "--version"}, o);
  c.detail = firstLine(r.out);
  if (!notNeeded.empty())
    c.detail += " (not used: " + notNeeded + ")";
  if (buildDir.empty() || !notNeeded.empty())
    return c;
  auto cache = llvm::MemoryBuffer::getFile(buildDir + "/CMakeCache.txt", true);
  if (!cache) {
    c.status = DoctorCheck::Fail;
    c.detail += "; " + buildDir + "/CMakeCache.txt is missing";
    c.fix = "configure the project first: cmake -S <source> -B " + buildDir;
    return c;
  }
  std::smatch m;
  std::string text = (*cache)->getBuffer().str();
  if (std::regex_search(text, m, std::regex("\nCMAKE_GENERATOR:INTERNAL=([^\n]*)")))
    c.detail += "; generator " + m.str(1);
  if (std::regex_search(text, m, std::regex("\nCMAKE_CUDA_COMPILER_LAUNCHER:[A-Z]*=([^\n]*)")) &&
      !m.str(1).empty()) {
    c.detail += "; CUDA launcher " + m.str(1);
    if (m.str(1).find("cache") != std::string::npos && m.str(1).find("ciq-ptxas") == std::string::npos) {
      c.status = DoctorCheck::Warn;
      c.fix = "a compiler cache without ciq-ptxas in front can hide candidates: put ciq-ptxas "
              "first in CMAKE_CUDA_COMPILER_LAUNCHER (ciq_tune() does) and run `ciq canary`";
    }
  }
  return c;
}

DoctorCheck checkGpu(bool needGpu) {
  DoctorCheck c{"GPU"};
  auto st = queryGpuState();
  if (st["gpus"].empty()) {
    c.status = needGpu ? DoctorCheck::Fail : DoctorCheck::Warn;
    c.detail = st.value("note", "no GPU") + std::string("; compile-only objectives only");
    c.fix = needGpu ? "the configured benchmark needs a GPU: run on a machine with one, or use "
                      "compile-only objectives (registers, spill_bytes)"
                    : "runtime objectives (time_ms) need a visible GPU";
    return c;
  }
  // A throttled GPU or one another compute process uses measures nothing
  // comparable: a warning with what nvidia-smi reports.
  std::vector<std::string> problems;
  for (const auto &g : st["gpus"]) {
    c.detail += (c.detail.empty() ? "" : "; ") + describeGpu(g);
    for (const auto &p : gpuProblems(g))
      problems.push_back(p);
  }
  if (!problems.empty()) {
    c.status = DoctorCheck::Warn;
    for (const auto &p : problems)
      c.detail += "; " + p;
    c.fix = "measure on an idle, cool GPU: wait for the other process, let the GPU cool down (ciq validate gives no "
            "verdict while it throttles or is shared)";
  }
  return c;
}

DoctorCheck checkWritableDir(const std::string &name, const std::string &dir) {
  DoctorCheck c{name};
  if (auto ec = llvm::sys::fs::create_directories(dir)) {
    c.status = DoctorCheck::Fail;
    c.detail = dir + " cannot be created (" + ec.message() + ")";
    c.fix = "set XDG_CACHE_HOME to a writable directory";
    return c;
  }
  llvm::SmallString<128> probe;
  int fd = -1;
  if (auto ec = llvm::sys::fs::createUniqueFile(dir + "/.ciq-doctor-%%%%%%", fd, probe)) {
    c.status = DoctorCheck::Fail;
    c.detail = dir + " is not writable (" + ec.message() + ")";
    c.fix = "fix its permissions or set XDG_CACHE_HOME to a writable directory";
    return c;
  }
  ::close(fd);
  llvm::sys::fs::remove(probe);
  c.detail = dir + " is writable";
  return c;
}

int printChecks(const std::vector<DoctorCheck> &checks, llvm::raw_ostream &os) {
  int failed = 0;
  for (const auto &c : checks) {
    const char *tag = c.status == DoctorCheck::Ok ? "ok  " : c.status == DoctorCheck::Warn ? "warn" : "FAIL";
    failed += c.status == DoctorCheck::Fail;
    os << tag << " " << c.name << ": " << c.detail;
    if (c.status != DoctorCheck::Ok && !c.fix.empty())
      os << "; fix: " << c.fix;
    os << "\n";
  }
  os << (failed ? std::to_string(failed) + " check(s) failed" : std::string("all checks passed"))
     << "\n";
  return failed;
}

} // namespace ciq
