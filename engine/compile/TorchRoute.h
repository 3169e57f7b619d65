// PyTorch extensions (torch.utils.cpp_extension): setup.py/pip builds and
// load()/load_inline() at run time. PyTorch runs nvcc by a full path, not by
// name: $PYTORCH_NVCC where set (its ninja builds, JIT loads), else
// <CUDA_HOME>/bin/nvcc (also its builds without ninja), with ccache or
// sccache in front when one is installed. During a tune and for lock builds
// ciq points both at the nvcc stand-in: PYTORCH_NVCC, and CUDA_HOME at a view
// of the real toolkit whose bin/nvcc is the stand-in; TORCH_NO_COMPILER_WRAPPER
// keeps a compiler cache from hiding the candidate behind an object it cached
// (the wrapper refuses a cache in front of it).
#pragma once
#include "engine/config/Config.h"

#include <map>
#include <optional>
#include <string>

namespace ciq {

// Makes `view` a CUDA toolkit folder for PyTorch: bin/nvcc a link to
// ciq-ptxas (the nvcc stand-in), every other entry (bin/*, include, lib64,
// nvvm, ...) a link to the same entry of the real toolkit `toolkitRoot`.
bool makeCudaHomeView(const std::string &view, const std::string &toolkitRoot, std::string &error);

// The real toolkit behind the view: $CUDA_HOME or $CUDA_PATH where they name
// a toolkit that is not itself a ciq view, else the folder above the real
// nvcc's bin/ (links resolved); "" when neither is known.
std::string realToolkitRoot(const std::string &realNvcc);

// The variables that send PyTorch's nvcc runs to the stand-in: PYTORCH_NVCC,
// CUDA_HOME (the view, made under runDir/cuda-home), TORCH_NO_COMPILER_WRAPPER.
// Empty (no CUDA_HOME) when the view cannot be made: `note` says why.
std::map<std::string, std::string> torchEnv(const std::string &runDir, const std::string &standinDir,
                                            const std::string &realNvcc, std::string &note);

// How the workload's PyTorch compiles run, for `ciq doctor` and the tune's
// start: the build is a setup.py / pip build of a torch.utils.cpp_extension
// extension, and/or the benchmark loads one at run time (load, load_inline).
struct TorchUse {
  bool build = false;     // build.command builds an extension (setup.py or pip, with cpp_extension in it)
  bool jit = false;       // a script of benchmark.command calls cpp_extension's load()/load_inline()
  bool cudaSources = true;  // the build's setup.py names a .cu source (false: nothing to tune)
  std::string python;     // the interpreter that imports torch (the build's, else python3)
  std::string file;       // the file that showed it (setup.py, pyproject.toml, the script)
  bool any() const { return build || jit; }
};
TorchUse detectTorchUse(const TuneConfig &cfg);

// PyTorch as the workload's interpreter imports it: "" when it has CUDA
// (`version` set to "2.11.0 (CUDA 13.0)"), else one line saying what is
// wrong (not importable, a build without CUDA) and what to do.
std::string torchProblem(const TorchUse &use, std::string &version);

} // namespace ciq
