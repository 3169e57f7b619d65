// Several GPUs: one worker per GPU evaluates candidates at the same time, each
// with its own build tree (a second configure of the user's project with the
// same cache), its own daemon socket, and CUDA_VISIBLE_DEVICES set to its GPU,
// so that one worker builds while another measures.
#pragma once
#include "engine/measure/Benchmark.h"
#include "engine/compile/CandidateBuild.h"
#include "engine/measure/MeasuredPhase.h"
#include "engine/config/Config.h"

#include <memory>
#include <string>
#include <vector>

namespace ciq {

struct Worker {
  int index = 0;
  TuneConfig cfg;                            // buildDir, runDir and benchmark paths of this worker
  std::unique_ptr<CandidateBuilder> builder;
  std::unique_ptr<BenchmarkRunner> bench;    // null for compile-only objectives
  std::unique_ptr<MeasuredPhase> phase;      // this worker's GPU: lock and state (with bench)
  std::string gpu;                           // its CUDA_VISIBLE_DEVICES entry; empty: all visible
};

// GPUs this process may use: CUDA_VISIBLE_DEVICES when set, else `nvidia-smi -L`.
int visibleGpuCount();

// The CUDA_VISIBLE_DEVICES entry of each of n workers: the visible GPUs
// (CUDA_VISIBLE_DEVICES' entries, else 0..count-1) in turn. More workers than
// GPUs share them: a GPU measures one candidate at a time (its GpuLock), so
// the other workers on it build their next candidates meanwhile. With no GPU
// known, worker k gets "k" (a benchmark without a GPU ignores it).
std::vector<std::string> workerGpus(int n);

// How many workers: $CIQ_WORKERS, else cfg.workers (may exceed the GPUs: see
// workerGpus), else per visible GPU a quarter of the host's cores (1 to 4;
// one with overlap: off); always 1 without a benchmark (compile-only
// objectives already use every core for one build).
int workerCount(const TuneConfig &cfg);

// Worker k >= 1: configures <run dir>/worker-<k>/build from the main build
// tree's source and cache (once), and rewrites the benchmark's paths into it.
bool prepareWorkerConfig(const TuneConfig &main, int k, TuneConfig &out, std::string &error);

// The same for a build tree in `dir` (<dir>/build; run files in dir): what
// `ciq worker` evaluates in. `label` names it in errors.
bool prepareWorkspaceConfig(const TuneConfig &main, const std::string &dir, const std::string &label, TuneConfig &out,
                            std::string &error);

} // namespace ciq
