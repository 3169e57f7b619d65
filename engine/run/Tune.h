// The search loop of `ciq tune` / `ciq resume`: baseline first, then the
// strategy's generations, each candidate rebuilt through the user's build
// with the wrapper injecting it, checked, scored, journaled; the winner is
// frozen in ciq.lock. A library: it returns a TuneOutcome and leaves the
// summary, the error line and the exit status to the command
// (engine/commands/tune.cpp); only the progress lines (Progress.h) are
// printed while it runs.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"
#include "engine/winner/Winner.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct TuneOptions {
  bool resume = false;        // continue the journal of the run directory
  bool fresh = false;         // discard an unfinished earlier search
  bool canary = true;         // prove controls reach the compiler first (and search.canary)
  int maxEvaluations = 0;     // override search.max_evaluations (0: keep)
  double timeSeconds = 0;     // --time: a time budget for the whole tune (0: search.max_minutes, if any)
  std::string timeText;       // --time as given, echoed as given
  bool writeLock = true;
  bool quiet = false;         // no per-evaluation lines
  bool keepInvalid = false;   // keep objects and benchmark of INVALID candidates (replay)
  // `ciq canary`: only the baseline and a degrading configuration (ptxas
  // --opt-level=0, or this ACF), in <run dir>/canary.
  bool canaryOnly = false;
  std::string canaryAcf;
  std::string canaryAcfStage = "ptxas";
  // Each warning as it happens (the command prints it); TuneOutcome::warnings has them all.
  std::function<void(const std::string &)> onWarning;
};

// What a finished search shows: the baseline and the winner side by side
// (printSummary, Winner.h).
struct TuneSummary {
  TuneConfig config;              // as searched
  std::vector<Evaluation> shown;  // the evaluations, the minimized winner last when it won
  WinnerChoice winner;            // into shown
  Verdicts verdicts;
};

struct TuneOutcome {
  enum class Status {
    Done,     // lock written, or no improvement found, or the canary passed
    Failed,   // `error` says why (empty: a warning already did)
    Stopped,  // by `ciq stop`; `ciq resume` continues
  };
  Status status = Status::Done;
  std::string error;                   // one line: what, where, what to do
  std::vector<std::string> warnings;   // in order, also given to TuneOptions::onWarning
  std::optional<TuneSummary> summary;  // when the search got to choosing its winner
  // Unchanged: nothing beat the default compile and `lockfile` exists;
  // Absent: nothing beat it and there is no lock (none is written).
  enum class Lock { NotWritten, Written, Unchanged, Absent } lock = Lock::NotWritten;
  std::string lockfile;                // the lock written, left unchanged or absent
  // Written: the sections the lock now has, and which this tune replaced.
  std::vector<std::string> lockSections, lockAdded, lockReplaced;
  bool lockReplacedOneWinner = false;
};

TuneOutcome runTune(TuneConfig cfg, const TuneOptions &opts);

// Results of the run directory (journal), for boost/diagnose/explain users.
std::vector<Evaluation> loadEvaluations(const TuneConfig &cfg);

} // namespace ciq
