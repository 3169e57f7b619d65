// The summary's kernel times (benchmark.metric kernel_time): which kernels
// the benchmark launched and their GPU time, baseline against winner, from
// one traced run of each (Evaluation::kernelTimes).
#pragma once
#include "engine/record/Evaluation.h"

#include <cstdio>
#include <string>

namespace ciq {

// The traced kernel of that mangled name (ptxas's name), or nullptr.
const KernelTime *findKernelTime(const KernelTimes &ks, const std::string &mangled);

// " [launched: 1.2 -> 1.1 ms GPU time]", " [not launched by the benchmark]",
// or "" when the baseline has no kernel times (nothing traced).
std::string launchNote(const Evaluation &base, const Evaluation &win, const std::string &mangled);
// The benchmark launched the kernel in both, and under the winner it took no
// more GPU time a launch (within 1%): more registers or spills were its
// trade (a relaxed occupancy request), not a loss.
bool launchedNoSlower(const Evaluation &base, const Evaluation &win, const std::string &mangled);

// A build made after the search (the minimized winner) is not traced: it
// gets the kernel times of a traced evaluation of the very same program
// (objects_sha256, the host code, so the same launches, and
// device_code_sha256, the same kernels), said in its kernelTimesFrom; none
// when no such evaluation exists.
void borrowKernelTimes(Evaluation &built, const std::vector<Evaluation> &evals);

// "kernel times (GPU ms of one traced run): ..." and one row per kernel
// launched by the baseline or the winner; nothing when neither was traced.
void printKernelTimes(const Evaluation &base, const Evaluation *win, FILE *out);

} // namespace ciq
