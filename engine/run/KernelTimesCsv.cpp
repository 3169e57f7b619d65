#include "engine/run/KernelTimesCsv.h"
#include "common/FileIO.h"
#include "engine/record/RunSchema.h"

#include <sstream>

namespace ciq {

static std::string triple(const int v[3]) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

bool writeKernelTimesCsv(const std::string &dir, const std::vector<Evaluation> &evals, std::string &error) {
  bool any = false;
  std::ostringstream out;
  out << resultsCsvRow({"candidate_id", "kernel", "demangled", "launches", "gpu_ms", "min_ms", "max_ms", "grid",
                        "block", "registers", "static_shared_bytes", "dynamic_shared_bytes", "traced_run"});
  for (const Evaluation &e : evals)
    for (const KernelTime &k : e.kernelTimes) {
      any = true;
      out << resultsCsvRow({e.candidateId, k.mangled, k.demangled, std::to_string(k.launches),
                            resultsCsvNumber(k.gpuMs), resultsCsvNumber(k.minMs), resultsCsvNumber(k.maxMs),
                            triple(k.grid), triple(k.block), std::to_string(k.registers),
                            std::to_string(k.staticSharedBytes), std::to_string(k.dynamicSharedBytes), e.kernelTimesFrom});
    }
  if (!any)
    return true;
  return writeFileAtomically(dir + "/" + kKernelTimesCsv, out.str(), error, /*durable=*/false);
}

} // namespace ciq
