// `ciq doctor`: checks the environment before a search. Each check is one
// line: what was found, and the fix when it failed. Nothing is changed.
#pragma once
#include <llvm/Support/raw_ostream.h>
#include <string>
#include <vector>

namespace ciq {

struct DoctorCheck {
  DoctorCheck() = default;
  explicit DoctorCheck(std::string n) : name(std::move(n)) {}
  std::string name;     // "nvcc", "ptxas --apply-controls", ...
  enum Status { Ok, Warn, Fail } status = Ok;
  std::string detail;   // what was found (versions, paths, GPU)
  std::string fix;      // what to do when it is not Ok
};

DoctorCheck checkNvcc();
DoctorCheck checkPtxas();
// Runs ptxas on a tiny PTX with `--apply-controls <garbage file>`: "Unknown
// option" means this ptxas cannot take ACFs; a complaint about the file's
// format (or success) means it parses the option.
DoctorCheck checkApplyControls();
// CMake's version; the generator of `buildDir`'s CMakeCache.txt when given,
// and its CMAKE_CUDA_COMPILER_LAUNCHER (a cache such as ccache is noted).
// `notNeeded` (a workload that is no CMake build: "build: command in
// <ciq.yaml>"): neither a missing cmake nor a missing cache is a problem.
DoctorCheck checkCmake(const std::string &buildDir, const std::string &notNeeded = "");
// nvidia-smi: name, compute capability, driver, clocks. No GPU is a warning
// (compile-only objectives still work), a failure when `needGpu`.
DoctorCheck checkGpu(bool needGpu);
DoctorCheck checkWritableDir(const std::string &name, const std::string &dir);

// "ok   nvcc: ..." / "FAIL ptxas: ...; fix: ..."; returns the number of failures.
int printChecks(const std::vector<DoctorCheck> &checks, llvm::raw_ostream &os);

} // namespace ciq
