// One kernel's GPU time in one traced benchmark run, summed over every
// process of the run (engine/measure/KernelTrace.h reads it from the traces
// libciq-kernel-trace writes). Kept on an evaluation (Evaluation::kernelTimes)
// so the summary, results and per-kernel scoring see which kernels ran.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ciq {

struct KernelTime {
  std::string mangled;    // as CUPTI names it
  std::string demangled;  // LLVM's Itanium demangler; the mangled name when it is not mangled
  uint64_t launches = 0;
  double gpuMs = 0;       // summed end - start of every launch
  double minMs = 0, maxMs = 0;   // of one launch
  // The first launch's configuration.
  int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int registers = 0, staticSharedBytes = 0, dynamicSharedBytes = 0;
  bool operator==(const KernelTime &o) const {
    return mangled == o.mangled && demangled == o.demangled && launches == o.launches && gpuMs == o.gpuMs;
  }
};

using KernelTimes = std::vector<KernelTime>;

} // namespace ciq
