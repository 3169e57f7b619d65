// Per-kernel controls in the search space (docs/search-space.md,
// "Per-kernel controls"): after the baseline is built, each of its kernels
// (entry functions, from the ptxas receipts) gets its own controls, written
// into its PTX by the wrapper (common/KernelDirective.h):
//   kernel.<name>.maxnreg        a register ceiling below what it uses (or
//                                any, where ptxas capped it and it spills)
//   kernel.<name>.minnctapersm   blocks per SM its __launch_bounds__ ask for
//                                (entries with .maxntid/.reqntid only)
//   kernel.<name>.smem_spilling  spill to shared memory (entries with
//                                __launch_bounds__ that spill)
// The controls are derived from the baseline alone, so a resumed search
// derives the same ones from its journaled baseline.
#pragma once
#include "common/Protocol.h"
#include "engine/config/Space.h"

#include <string>
#include <vector>

namespace ciq {

struct KernelControlsConfig {
  // "auto": on for runtime objectives with the default space; "on"; "off".
  std::string mode = "auto";
  std::string kernels;       // a regex on the mangled or demangled name ("" : every kernel)
  int maxKernels = 8;        // the first this many (by GPU time, when known; else as compiled)
  std::vector<std::string> directives = {"maxnreg", "minnctapersm", "smem_spilling"};
  // How a kernel's controls are judged: "per_kernel" (on its own GPU time,
  // where the benchmark's kernels are timed: engine/search/KernelSearch.h)
  // or "whole_program" (as controls of the whole program's objective).
  std::string scoring = "per_kernel";
  int budget = 0;            // binaries kept for the per-kernel stage (0: auto)
  std::string origin;        // "ciq.yaml:12" of the section, for errors
  // The tune's first objective (objectives[0].metric): without kernel times
  // the kernels are ranked by it, and a compile objective gets only the
  // directives that can improve it (a register ceiling adds spills, never
  // removes one). Set by the engine, not read from ciq.yaml.
  std::string objective;
};

// One kernel of the baseline as the space sees it (every architecture merged).
struct SpaceKernel {
  std::string key, label, mangled, demangled;
  int registers = 0;         // the most of any architecture
  long spillBytes = 0;       // stores + loads, the most of any architecture
  bool ptxKnown = false;
  int maxThreads = 0, minBlocks = 0;
  int sourceMaxnreg = 0;         // the entry's own .maxnreg (__maxnreg__), 0: none
  bool setmaxnreg = false;       // warp-specialized register reconfiguration in its body
  bool dynamicShared = false;    // uses dynamic shared memory
  bool relocatable = false, deviceDebug = false;   // compiled -rdc / -G
  std::string splitProblem;      // why its compile cannot take PTX edits ("" : it can)
  bool library = false;          // CUB, Thrust, CUTLASS, CuTe: not the project's own
};

// CUB, Thrust, CUTLASS or CuTe (by the demangled name's namespace): a
// library's kernel, whose name changes with every CCCL release.
bool libraryKernel(const std::string &demangled);

// The baseline's kernels, in the order compiled, each once.
std::vector<SpaceKernel> spaceKernels(const std::vector<KernelStats> &baseline);

// The short name a control is called by: the demangled name without its
// parameter list and return type ("(anonymous namespace)::sgemm_blocked" ->
// "sgemm_blocked", "void tile<64>(float*)" -> "tile<64>").
std::string kernelLabel(const std::string &demangled, const std::string &mangled);

struct KernelControls {
  std::vector<Control> controls;
  std::vector<std::string> notes;   // one line each: kernels left out and why
  std::string error;                // the filter matched no kernel, a bad regex
};

// The per-kernel controls for `kernels` (the first maxKernels that match the
// filter; `order`, when not empty, is the kernel keys by GPU time, largest
// first: kernels it does not name are left out, as the benchmark never
// launched them).
KernelControls kernelControlsFor(const KernelControlsConfig &cfg, const std::vector<SpaceKernel> &kernels,
                                 const std::vector<std::string> &order = {});

} // namespace ciq
