// The summary's kernel table (engine/winner/Winner.cpp printSummary): what a
// per-kernel directive of the winner costs beside the objective.
#include "common/KernelDirective.h"
#include "engine/winner/Winner.h"

#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>

using namespace ciq;

namespace {

KernelStats walk(long spills, long smem) {
  KernelStats k;
  k.name = "_Z4walkPf";
  k.demangled = "walk(float*)";
  k.arch = "sm_90";
  k.registers = 64;
  k.usageKnown = k.frameKnown = true;
  k.spillStores = spills;
  k.sharedBytes = smem;
  return k;
}

Evaluation compiled(const std::string &id, long spills, long smem) {
  Evaluation e;
  e.candidateId = id;
  e.ok = true;
  e.scores["spill_bytes"] = (double)spills;
  e.kernels = {walk(spills, smem)};
  return e;
}

std::string summary(const TuneConfig &cfg, const std::vector<Evaluation> &evals) {
  char *buf = nullptr;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  printSummary(cfg, evals, {1, true, ""}, f, Verdicts{});
  fclose(f);
  std::string s(buf, n);
  free(buf);
  return s;
}

} // namespace

// Issue 56 item 8: enable_smem_spilling "wins" 100 -> 0 spill bytes by moving
// the spills into shared memory; the summary says what they cost there.
TEST(SummaryKernels, SharedMemorySpillingShowsItsCost) {
  TuneConfig cfg;
  cfg.objectives.push_back({"spill_bytes", "minimize", "bytes", {}, "sum", {}});
  std::vector<Evaluation> evals = {compiled("c0000", 100, 0), compiled("c0004", 0, 5120)};
  EXPECT_EQ(summary(cfg, evals).find("enable_smem_spilling"), std::string::npos);   // no such directive: no line
  evals[1].rendered.kernels = {{kernelKey("_Z4walkPf"), kDirectiveSmemSpilling, 1, "walk"}};
  std::string out = summary(cfg, evals);
  EXPECT_NE(out.find("walk(float*) sm_90: enable_smem_spilling moved its spills to shared memory, which spill bytes "
                     "do not count: shared memory 0 -> 5120 bytes per block (+5120)"),
            std::string::npos)
      << out;
}
