// One evaluated candidate: what the journal and results.csv record.
#pragma once
#include "common/InvalidReason.h"
#include "common/Protocol.h"
#include "engine/record/KernelTime.h"
#include "engine/record/Rendered.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {


struct ObjectRecord {
  std::string source, output, deviceCodeSha256, status;
  long deviceCodeBytes = 0;
  double wallMs = 0;
  bool ptxasRan = true;   // false: ptxas printed no report (-dlto): compile metrics are unknown
  // How the wrapper made it (Receipt::ptxReuse): "reused" (ptxas on kept
  // PTX), "kept" (nvcc ran and kept its front end) or "full" (nvcc ran).
  std::string ptxReuse;
  // The candidate's per-kernel controls this compile wrote into its PTX:
  // kernel (kernelKey) -> the architectures whose PTX had that entry. The
  // lock records it per translation unit (kernel_units), so a later build
  // can tell a kernel renamed or removed from one that was never here.
  std::map<std::string, std::vector<std::string>> directiveKernels;
  // From a compiler cache (Receipt::cached): wallMs is no compile time.
  bool cached = false;
};

// One case of benchmark.cases as one candidate ran it: its runs, and how it
// compares with the baseline's runs of the same case (CaseScore.h).
struct CaseResult {
  std::string name;
  std::vector<double> runs;
  double median = 0, cvPercent = -1, noisePercent = -1;
  std::string stoppedBy;
  int runsSaved = 0;
  double ratio = 0;     // median / the baseline's median; 0: not compared
  double pValue = -1;   // Welch against the baseline's runs; <0: not computed
  // The case's own traced run: the per-kernel search judges a kernel's trial
  // case by case (a trial faster over all cases may slow one of them).
  KernelTimes kernels{};
};

struct Evaluation {
  std::string candidateId;        // c0000 is the baseline
  int generation = 0;
  Point point;
  Rendered rendered;
  std::string candidateHash;
  bool ok = false;
  std::string reason;             // a name of invalidReasons() (InvalidReason.h), empty when ok
  std::string message;            // one line: what went wrong, with the log path
  std::map<std::string, double> scores;   // metric -> value (units: the objective's)
  std::string deviceCodeSha256;
  // SHA-256 over the bytes of every rebuilt object (host and device code,
  // nvcc's temporary file names blanked): a runtime measurement is reused
  // only when it is equal (objectsCodeSha256, common/DeviceCode.h).
  std::string objectsSha256;
  std::string duplicateOf;        // earlier candidate whose result this reuses
  std::string duplicateKind;      // "config", "device_code" or "executable"
  std::vector<KernelStats> kernels;
  std::vector<ObjectRecord> objects;
  std::vector<std::string> runtimeKernels;  // kernels compiled while the benchmark ran (Triton)
  std::vector<double> runs;       // benchmark values (empty with benchmark.cases: see cases)
  std::vector<CaseResult> cases;  // benchmark.cases, in the config's order; the score is their ratios' geometric mean
  double cvPercent = -1;          // <0: not measured
  double noisePercent = -1;       // relative 95% CI half-width of the median, %; <0: unknown
  std::string stoppedBy;          // why measuring stopped (MeasureOutcome::stoppedBy); "" : not measured
  int runsSaved = 0;              // runs racing spared this candidate
  std::vector<std::string> gpuProblems;   // the GPU's state while its runs ran (MeasuredPhase), when wrong
  std::vector<double> smClockMhz;   // the GPU's SM clock before and after its runs (MeasuredPhase); empty: unknown
  // The kernels the benchmark launched, with their GPU time: with the
  // kernel_time metric the last measured run's, else the traced warm-up
  // run's (benchmark.kernel_times); with cases, every case's merged.
  // Empty: not traced (kernelTimesWhy says why, when tracing was tried).
  KernelTimes kernelTimes;
  std::string kernelTimesFrom;   // "measured_runs", "warmup_run", or "" (MeasureOutcome::kernelsFrom)
  std::string kernelTimesWhy;
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
// A build made after the search (the minimized winner, `<id>-min`): the same
// members under op "build", so `ciq explain` finds the id the summary prints
// while a resume and results.csv, which read only evaluations, never see it.
nlohmann::json buildToJson(const Evaluation &e);
// Reads one journal evaluation line, checking every type; false with error
// "<where>: "<key>": expected ..., found ...".
bool evaluationFromJson(const nlohmann::json &j, Evaluation &e, std::string &error, const std::string &where);

std::string nowIso8601();

} // namespace ciq
