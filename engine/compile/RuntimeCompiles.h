// Programs that compile kernels while they run: Triton runs ptxas for every
// @triton.jit kernel it compiles, other frameworks call ptxas or nvcc
// themselves. The benchmark's process gets the engine's socket and ptxas/nvcc
// stand-ins (TRITON_PTXAS_PATH, TRITON_PTXAS_BLACKWELL_PATH, PATH), and each
// candidate its own framework cache (TRITON_CACHE_DIR), so those compiles get
// the candidate; their receipts count like a build's, and a run whose
// expected compiles did not reach the candidate is a stale build.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"
#include "common/Protocol.h"

#include <map>
#include <string>
#include <vector>

namespace ciq {

// Makes dir hold `ptxas` and `nvcc`, links to ciq-ptxas (stand-ins: a
// framework that runs ptxas by a path or from PATH reaches ciq-ptxas).
bool makeStandinDir(const std::string &dir, std::string &error);

// The real ptxas behind the stand-ins: $CIQ_REAL_PTXAS, else beside the
// build tree's CUDA compiler, else the first ptxas on PATH; "" when none.
// The nvcc behind CMAKE_CUDA_COMPILER where that is a link to a compiler
// cache (ccache runs the next nvcc on PATH, which may be a ciq stand-in:
// issue 41 item 4): CIQ_REAL_NVCC for every compile; "" otherwise.
std::string realNvccFor(const TuneConfig &cfg);
std::string realPtxasFor(const TuneConfig &cfg);

// The variables that point a process's run-time compiles at the stand-ins
// in standinDir: TRITON_PTXAS_PATH, TRITON_PTXAS_BLACKWELL_PATH, PATH (the
// stand-ins first), CIQ_REAL_PTXAS, CIQ_REAL_NVCC (the user's, else the nvcc
// beside the real ptxas).
std::map<std::string, std::string> standinEnv(const std::string &standinDir, const std::string &realPtxas);

// The candidate's own framework cache (TRITON_CACHE_DIR), named by its
// candidate hash: kept after the evaluation so that finalists re-measured
// later reuse the kernels that evaluation compiled.
std::string frameworkCacheDir(const TuneConfig &cfg, const std::string &candidateHash);

// Adds the receipts of compiles made while the benchmark ran to e (kernels,
// device code, runtimeKernels) and checks them against `expected` (the
// baseline's run-time kernels): a kernel missing, or no compile at all when
// `required` (a workload with no build), makes e INVALID stale_build.
void applyRuntimeReceipts(const std::vector<Receipt> &receipts, const std::vector<std::string> &expected,
                          bool required, Evaluation &e);

} // namespace ciq
