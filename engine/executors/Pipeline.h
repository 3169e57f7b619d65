// The per-candidate pipeline, one candidate end to end in one worker's build
// tree: rebuilt through the user's build with the worker's own daemon
// injecting it, receipts checked, compile metrics scored, then (unless the
// device code was measured already) correctness check and benchmark, and the
// GPU's clocks and throttle state. `ciq tune`'s local workers (one per GPU)
// and `ciq worker` (a Slurm job, docs/cluster.md) run this same code.
#pragma once
#include "engine/record/Evaluation.h"
#include "engine/executors/Workers.h"

#include <functional>
#include <string>

namespace ciq {

struct PipelineOptions {
  std::string logPath;
  // INVALID candidates keep their objects and benchmark executable here
  // (for `ciq replay`); empty: nothing kept.
  std::string artifactsDir;
  // An earlier evaluation with the code of the built candidate (its result
  // is reused, not re-measured: the caller's reuse key), or null. Empty:
  // always measure.
  std::function<const Evaluation *(const Evaluation &built)> deviceTwin;
  std::function<void()> onMeasuring;   // progress: the build is done
  // Progress notes: a crashed compiler retried, GPU problems while measuring.
  std::function<void(const std::string &)> note;
  // Racing: the incumbent the candidate's runs are tested against, or null.
  const RaceAgainst *race = nullptr;
};

// Fills e (id, generation, point, rendered and hash set by the caller). A
// compiler crash is retried once (log <log>.retry.log) before it counts.
void evaluateCandidate(Worker &w, Evaluation &e, const PipelineOptions &o);

// The correctness check and benchmark of w's current build into e, holding
// w's GPU alone (w.phase) and recording its state with the result.
void measureCandidate(Worker &w, Evaluation &e, const std::function<void(const std::string &)> &note = {},
                      const RaceAgainst *race = nullptr);

// e was built and has the device code of d: marked as d's duplicate; with a
// benchmark, d's runtime result stands for it.
void shareDeviceResult(Evaluation &e, const Evaluation &d, bool runtime);

// e has the command lines of the evaluated `twin`: twin's result under e's
// id, generation and point, not rebuilt.
Evaluation configTwin(const Evaluation &twin, const Evaluation &e);

// The candidate's header: id, generation, point, rendered command lines, hash.
Evaluation newEvaluation(const SearchSpace &space, const Point &p, int generation, const std::string &id);

} // namespace ciq
