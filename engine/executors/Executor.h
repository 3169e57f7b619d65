// Where a batch of candidates is built and measured: this host's workers
// (LocalExecutor.h: one build tree each, sharing the GPUs) or Slurm jobs
// (run/slurm/SlurmExecutor.h). Both take a batch in pool order and apply one
// twin rule (BatchTwins.h), so the journal of a search does not depend on the
// executor or on which candidate finished first.
#pragma once
#include "engine/record/Evaluation.h"

#include <functional>
#include <string>
#include <vector>

namespace ciq {

// What the search recorded before this batch.
struct KnownResults {
  // The recorded evaluation with these command lines and ACF bytes, or null.
  std::function<const Evaluation *(const std::string &candidateHash)> byConfiguration;
  // The recorded evaluation, measured OK, with the code of `built`, or null.
  std::function<const Evaluation *(const Evaluation &built)> byDeviceCode;
  // What must be equal for a result to be reused ("" : never reused).
  std::function<std::string(const Evaluation &)> reuseKey;
};

class Executor {
public:
  virtual ~Executor() = default;
  // How many candidates are evaluated at once.
  virtual size_t parallelism() const = 0;
  // How many candidates one batch may hold (what a kill -9 may cost).
  virtual size_t batchLimit() const = 0;
  // Evaluates the batch in place (each header set: id, generation, point,
  // rendered, hash). Returns how many candidates, from the first, are
  // complete: all of them, or fewer when `ciq stop` came first; only those
  // may be recorded (`ciq resume` evaluates the others).
  virtual size_t evaluate(std::vector<Evaluation> &batch, const KnownResults &known) = 0;
};

} // namespace ciq
