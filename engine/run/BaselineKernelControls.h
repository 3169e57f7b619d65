// The per-kernel controls a baseline gives (engine/config/KernelSpace.h):
// its kernels from the ptxas receipts, restricted to those its traced run
// launched (largest GPU time first) when it has kernel times, through the
// kernel_controls filter (benchmark.kernels when it names none). One
// function for `ciq tune` (after the baseline, and again on resume from the
// journaled one) and `ciq sample` (from the run directory's journal), so
// both show the same controls.
#pragma once
#include "engine/config/Config.h"
#include "engine/config/KernelSpace.h"
#include "engine/record/Evaluation.h"

#include <string>

namespace ciq {

struct BaselineKernelControls {
  KernelControls controls;
  size_t kernels = 0;     // kernels of the baseline's build
  bool launchedOnly = false;   // restricted to the kernels the benchmark launched
  std::string why;        // without kernel times: why every kernel gets controls
};

BaselineKernelControls baselineKernelControls(const TuneConfig &cfg, const Evaluation &baseline);

} // namespace ciq
