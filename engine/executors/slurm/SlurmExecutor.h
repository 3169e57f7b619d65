// executor: slurm (docs/cluster.md). The engine stays on the submitting host
// with the journal and the search; each evaluation is one Slurm job running
// `ciq worker` on a node, which writes a result record under
// <run dir>/slurm/ (shared storage) that the engine reads back.
//
// Faults: a job that ends because of its node (NODE_FAIL, BOOT_FAIL,
// PREEMPTED, TIMEOUT, vanished from the queue, or a worker that found its GPU
// gone) is submitted once more, excluding that node; a second such end makes
// the candidate INVALID with its own reason. <run dir>/slurm/jobs.json lists
// the jobs in flight, so a killed engine's `ciq resume` reattaches to them
// (or resubmits) and `ciq stop` can cancel them. The finalists of a runtime
// search are one more such job (SlurmFinalists.h).
#pragma once
#include "engine/config/Config.h"
#include "engine/compile/Daemon.h"
#include "engine/record/Evaluation.h"
#include "engine/executors/Executor.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

class SlurmExecutor : public Executor {
public:
  // keepInvalid: INVALID candidates keep their artifacts (keep_invalid).
  // warn: where warnings go (squeue failing, a job table not written).
  SlurmExecutor(const TuneConfig &cfg, Daemon &daemon, bool keepInvalid, std::function<void(const std::string &)> warn)
      : cfg_(cfg), daemon_(daemon), keepInvalid_(keepInvalid), warn_(std::move(warn)) {}
  // sbatch, squeue and scancel on PATH. resume: reads the job table and
  // results of the killed engine; else starts <run dir>/slurm afresh.
  bool start(bool resume, std::string &error);
  // A generation's candidates go to Slurm at once; slurm.max_jobs of them
  // are in flight.
  size_t parallelism() const override { return (size_t)cfg_.search.poolSize; }
  size_t batchLimit() const override { return (size_t)cfg_.search.poolSize; }
  // Each candidate with a configuration of its own is one job; the twin rule
  // (BatchTwins.h) is applied in pool order when the jobs have ended. 0: `ciq
  // stop` came first (the jobs were cancelled; nothing is filled).
  size_t evaluate(std::vector<Evaluation> &batch, const KnownResults &known) override;
  // The finalists' job (SlurmFinalists.h): `ciq worker --finalists` with e
  // as its header (id "finalists", a hash of the finalists) and `finalists`
  // in its spec; submitted, requeued after a node fault and read back like
  // an evaluation. e is filled from the record, `record` gets all of it.
  // false: `ciq stop` came first.
  bool runFinalistsJob(Evaluation &e, const nlohmann::json &finalists, nlohmann::json &record);
  // scancel of every job of the table.
  void cancelAll();

private:
  struct Job {
    Evaluation *e = nullptr;
    std::string id, state, node, reason;
    int attempt = 1;
    std::vector<std::string> excluded;   // nodes that failed it
    std::string firstFailure;            // "NODE_FAIL on n1": what the requeue followed
    double submittedAt = 0, endedAt = 0;
    bool done = false;
    nlohmann::json finalists;            // the finalists' job: its list (else null)
    nlohmann::json *record = nullptr;    // the finalists' job: where its whole record goes
  };
  Job attach(Evaluation *e, const nlohmann::json &finalists = nullptr, nlohmann::json *record = nullptr);
  bool run(std::vector<Job> &jobs, bool keepInvalid);
  std::string dir() const { return cfg_.runDir + "/slurm"; }
  std::string resultPath(const Job &j) const;
  bool submit(Job &j, bool keepInvalid);
  bool takeResult(Job &j);
  void queryStates(std::vector<Job> &jobs);
  void jobEnded(Job &j, bool keepInvalid);
  void fail(Job &j, const std::string &reason, const std::string &message);
  void saveTable();

  const TuneConfig &cfg_;
  Daemon &daemon_;
  bool keepInvalid_ = false;
  std::function<void(const std::string &)> warn_;
  std::string sbatch_, squeue_, scancel_;
  nlohmann::json table_ = nlohmann::json::object();   // candidate id -> job in flight
};

// Cancels the jobs listed in <runDir>/slurm/jobs.json (`ciq stop` when no
// engine answers); the number cancelled.
int cancelSlurmJobs(const std::string &runDir, std::string &error);

} // namespace ciq
