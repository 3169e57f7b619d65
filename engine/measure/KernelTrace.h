// Reading the kernel traces of one benchmark run: every process of the run
// that initialized CUDA loaded libciq-kernel-trace.so (trace/) and wrote
// <prefix>.<pid>.json at exit; they are merged here into one figure per
// kernel (the kernel_time metric source, docs/config.md "Kernel times").
#pragma once
#include "engine/record/KernelTime.h"

#include <optional>
#include <string>

namespace ciq {

struct KernelTrace {
  KernelTimes kernels;   // merged by mangled name, most GPU time first
  int processes = 0;     // trace files read
};

// The traces <prefix>.<pid>.json of one run, merged. nullopt with one line
// ("no kernel times: ...") when no process wrote one (the benchmark launched
// no kernel, or the injection did not load), when one is not a trace, says its
// tracing failed (its CUPTI error), is incomplete (the process ended without
// exit handlers), or lost records (CUPTI dropped some: times would be too low).
std::optional<KernelTrace> readKernelTrace(const std::string &prefix, std::string &error);

// One trace document (one process's file, named `where` in errors).
std::optional<KernelTrace> parseKernelTrace(const std::string &text, const std::string &where, std::string &error);

// The trace files of `prefix` (sorted), and their removal before a run so
// that an earlier run's traces are never read as this one's.
std::vector<std::string> kernelTraceFiles(const std::string &prefix);
bool removeKernelTraces(const std::string &prefix, std::string &error);

// The summed GPU time (ms) of the kernels whose mangled or demangled name
// `pattern` matches (ECMAScript, anywhere in the name; all kernels when
// empty). nullopt with one line, listing the launched kernels, when none
// matches or the pattern is not a regex.
std::optional<double> kernelTimeMs(const KernelTimes &kernels, const std::string &pattern, std::string &error);

// Adds `from` to `into`, kernel by kernel (mangled name): launches and GPU
// time summed, min and max kept.
void mergeKernelTimes(KernelTimes &into, const KernelTimes &from);

// LLVM's Itanium demangler; the name itself when it is not mangled.
std::string demangleKernel(const std::string &mangled);

} // namespace ciq
