// One evaluated candidate: what the journal and results.csv record.
#pragma once
#include "Protocol.h"
#include "Space.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

// Why a candidate could not be scored.
namespace reason {
inline const char *CompileError = "compile_error";
inline const char *CompileTimeout = "compile_timeout";
inline const char *LinkError = "link_error";
inline const char *StaleBuild = "stale_build";
inline const char *RunCrash = "run_crash";
inline const char *RunTimeout = "run_timeout";
inline const char *WrongAnswer = "wrong_answer";
inline const char *ParseError = "parse_error";
// Slurm executor (docs/cluster.md): the node failed the job twice (it was
// requeued once on another node), or the worker could not run at all.
inline const char *NodeFailure = "node_failure";
inline const char *Preempted = "preempted";
inline const char *TimeLimit = "time_limit";
inline const char *GpuLost = "gpu_lost";
inline const char *WorkerFailed = "worker_failed";
} // namespace reason

struct ObjectRecord {
  std::string source, output, deviceCodeSha256, status;
  long deviceCodeBytes = 0;
  double wallMs = 0;
};

struct Evaluation {
  std::string candidateId;        // c0000 is the baseline
  int generation = 0;
  Point point;
  Rendered rendered;
  std::string candidateHash;
  bool ok = false;
  std::string reason;             // one of reason::*, empty when ok
  std::string message;            // one line: what went wrong, with the log path
  std::map<std::string, double> scores;   // metric -> value (units: the objective's)
  std::string deviceCodeSha256;
  std::string duplicateOf;        // earlier candidate whose result this reuses
  std::string duplicateKind;      // "config" or "device_code"
  std::vector<KernelStats> kernels;
  std::vector<ObjectRecord> objects;
  std::vector<double> runs;       // benchmark values
  double cvPercent = -1;          // <0: not measured
  double buildMs = 0, measureMs = 0;
  std::string log;
  std::string replay;             // shell line that rebuilds this candidate
  std::string evaluatedAt;
  bool pareto = false;            // filled when results.csv is written
  // Where it was measured: host name, and the GPU's clocks and throttle state
  // right after the benchmark (null without a GPU); Slurm job, attempt, node
  // and timestamps (null for the local executor). Journaled only when set.
  std::string node;
  nlohmann::json gpu;
  nlohmann::json slurm;
};

nlohmann::json evaluationToJson(const Evaluation &e);
Evaluation evaluationFromJson(const nlohmann::json &j);

std::string nowIso8601();

} // namespace ciq
