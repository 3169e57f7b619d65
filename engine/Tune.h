// The search loop of `ciq tune` / `ciq resume`: baseline first, then the
// strategy's generations, each candidate rebuilt through the user's build
// with the wrapper injecting it, checked, scored, journaled; the winner is
// frozen in ciq.lock.
#pragma once
#include "Config.h"
#include "Evaluation.h"

#include <string>
#include <vector>

namespace ciq {

struct TuneOptions {
  bool resume = false;        // continue the journal of the run directory
  bool fresh = false;         // discard an unfinished earlier search
  bool canary = true;         // prove controls reach the compiler first (and search.canary)
  int maxEvaluations = 0;     // override search.max_evaluations (0: keep)
  bool writeLock = true;
  bool quiet = false;         // no per-evaluation lines
  bool keepInvalid = false;   // keep objects and benchmark of INVALID candidates (replay)
  // `ciq canary`: only the baseline and a degrading configuration (ptxas
  // --opt-level=0, or this ACF), in <run dir>/canary.
  bool canaryOnly = false;
  std::string canaryAcf;
  std::string canaryAcfStage = "ptxas";
};

// Exit status: 0 done (lock written or no improvement found), 1 error,
// 3 stopped by `ciq stop` (resumable).
int runTune(TuneConfig cfg, const TuneOptions &opts);

// `ciq replay <candidate>`: rebuilds one journaled candidate with its exact
// command lines, build output on the terminal, then its correctness check and
// benchmark. Exit status 0 when it is OK.
int replayCandidate(TuneConfig cfg, const std::string &candidateId);

// Results of the run directory (journal), for boost/diagnose/explain users.
std::vector<Evaluation> loadEvaluations(const TuneConfig &cfg);

} // namespace ciq
