// The finalists of a runtime search on Slurm (docs/cluster.md): the baseline
// and the best few distinct builds are re-measured interleaved, like `ciq
// tune` does locally, but by ONE Slurm job on one node (`ciq worker
// --finalists`): it rebuilds each finalist in its workspace, snapshots each
// build's benchmark program, and runs them interleaved with the local
// path's rounds, warm-up and adaptive settings (Interleave.h) while holding
// the node's GPU (MeasuredPhase). Its result record has every finalist's
// values, the node and the GPU's state; the engine judges them with the same
// verdict code as local finalists.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"
#include "engine/executors/slurm/SlurmExecutor.h"
#include "engine/executors/Workers.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

// Engine side: what the finalists' job measured.
struct NodeFinalists {
  bool ok = false;
  bool stopped = false;                      // `ciq stop` came first
  std::string reason, message;               // why no values (the job's, or its node's, fault)
  std::vector<std::vector<double>> values;   // per finalist (in `order`), per round
  nlohmann::json where;                      // node, Slurm job, GPU state: for the journal's finalists row
  std::vector<std::string> gpuProblems;      // the node's GPU throttled or was shared while measuring
  nlohmann::json measurement;                // the node's MeasuredPhase record (the lock's measurement)
};

// Runs the finalists (order: the baseline first) as one job through the
// executor: a job that ends because of its node is requeued once on
// another, like an evaluation.
NodeFinalists measureFinalistsOnSlurm(const TuneConfig &cfg, SlurmExecutor &slurm,
                                      const std::vector<const Evaluation *> &order);

// Worker side (`ciq worker --finalists`): rebuilds, snapshots and measures
// the finalists listed (as the engine wrote them) in w's workspace; `main` is
// the search's configuration (logs go to its run directory). Sets e's ok,
// reason, message and gpu, and returns the record's "finalists" part.
nlohmann::json measureFinalistsInWorkspace(Worker &w, const TuneConfig &main, const nlohmann::json &list,
                                           Evaluation &e);

} // namespace ciq
