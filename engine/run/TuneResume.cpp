#include "engine/run/TuneRun.h"
#include "common/FileIO.h"

namespace ciq {

// benchmark.correctness.compare: a resumed search whose baseline is in the
// journal compares every candidate with the baseline's output numbers in
// reference-output.json. Without that file (deleted, cleaned up) the next
// check would take its own output for the baseline's, and a wrong answer would
// pass: the resume stops instead. The baseline cannot be checked again
// without measuring it again, which the journal already holds.
bool TuneRun::referenceKept() {
  if (cfg_.benchmark.compare.empty())
    return true;
  bool baselineDone = std::any_of(evals_.begin(), evals_.end(),
                                  [](const Evaluation &e) { return e.generation == 0 && e.ok; });
  std::string ref = cfg_.runDir + "/reference-output.json";
  if (!baselineDone)
    return true;
  std::string why;
  if (readReferenceOutput(ref, why))
    return true;
  fail(ref + " (the baseline's output numbers, benchmark.correctness.compare) " + why +
       "; without it no candidate's output can be checked: start over with `ciq tune --fresh --config " +
       shellQuote(cfg_.path) + "`");
  return false;
}

bool TuneRun::openJournal() {
  std::string jpath = cfg_.runDir + "/journal.jsonl";
  JournalContents prior = readJournal(jpath);
  if (opts_.resume ? !resumeJournal(prior, jpath) : !setPriorSearchAside(prior, jpath))
    return false;
  return startJournal(jpath);
}

// `ciq resume` with no start line to continue from: one error line that says
// what is missing and how to go on.
bool TuneRun::refuseResumeWithoutStart(const JournalContents &prior, const std::string &jpath) {
  // An existing journal without a start line (empty: killed before it was written) is not a missing one.
  uint64_t size = 0;
  std::string why = llvm::sys::fs::file_size(jpath, size) ? "no journal.jsonl"
                    : size == 0                            ? "journal.jsonl is empty"
                                                           : "journal.jsonl has no start line";
  // Evaluations without the start line that says what they searched
  // (space, seed, strategy) cannot be continued; `ciq tune` alone refuses
  // the unfinished search and sends the user back here.
  if (!prior.evaluations.empty())
    return fail(jpath + ": the start line is damaged or missing" +
                (prior.damaged.empty() ? std::string() : " (" + prior.damaged.front() + ")") + "; its " +
                std::to_string(prior.evaluations.size()) +
                " evaluation(s) cannot be resumed without it: start over with `ciq tune --fresh --config " +
                shellQuote(cfg_.path) + "` (the journal is kept as journal.jsonl.previous)");
  fail("nothing to resume in " + cfg_.runDir + " (" + why + "); start with `ciq tune`");
  return false;
}

// `ciq resume`: true for an unfinished search, or a finished one whose budget
// was raised with points left to evaluate; otherwise one error line (false).
bool TuneRun::finishedSearchExtends(const JournalContents &prior) {
  // A finished search has nothing to continue unless the budget was raised
  // (--max-evaluations): running its end again would only rewrite its lock.
  BudgetCount spent = countBudget(prior.evaluations);
  if (!binaries())
    spent.distinct = spent.configurations;
  auto most = mostEvaluations(cfg_.search.strategy, cfg_.space);
  bool exhausted = most && (double)prior.evaluations.size() >= *most;
  // A search that ended early (its strategy ran out of new binaries) ended
  // under the budget its done line records: only a larger one extends it.
  bool notRaised = prior.doneBudget > 0 && budget_ <= prior.doneBudget;
  if (prior.done &&
      (notRaised || spent.distinct >= budget_ || spent.compiled >= configurationCap() || exhausted)) {
    std::string lock = llvm::sys::fs::exists(cfg_.lockfile) ? cfg_.lockfile + " is left as it is"
                                                            : "no lock is written";
    // A strategy that ran out of points (exhaustive over the whole space)
    // caps any budget there: raising it, as the other message says, adds
    // nothing, and `--max-evaluations N` got that same advice back.
    if (exhausted)
      return fail("nothing to resume in " + cfg_.runDir + ": its search finished, and " + cfg_.search.strategy +
                  " has evaluated every point of its space (" + std::to_string(prior.evaluations.size()) +
                  " evaluations, the baseline included), so no budget adds one; " + lock +
                  "; widen space: in ciq.yaml and start a new search with `ciq tune --config " +
                  shellQuote(cfg_.path) + "`");
    std::string early = notRaised && spent.distinct < budget_ && spent.compiled < configurationCap()
                            ? ", ended early under this budget"
                            : "";
    return fail("nothing to resume in " + cfg_.runDir + ": its search finished (" +
                (binaries() ? std::to_string(spent.distinct) + " distinct binaries of a budget of " +
                                  std::to_string(budget_) + ", " + std::to_string(spent.configurations) +
                                  " configurations"
                            : std::to_string(spent.configurations) + " evaluations of a budget of " +
                                  std::to_string(budget_)) +
                early + "), and " + lock + "; raise the budget with `ciq resume --max-evaluations N` "
                "to extend it, or start a new search with `ciq tune --config " + shellQuote(cfg_.path) + "`");
  }
  return true;
}

// `ciq resume`: the journal's search continues where it stopped, under the
// same space, seed, strategy and inputs.
bool TuneRun::resumeJournal(const JournalContents &prior, const std::string &jpath) {
  if (prior.start.is_null())
    return refuseResumeWithoutStart(prior, jpath);
  // Read again for the message: readJournal named the damage by line number.
  RecordedStart start;
  std::string why;
  if (!startFromJson(prior.start, start, why, jpath + ": start line"))
    return fail(why + "; start over with `ciq tune --fresh`");
  if (start.spaceIdentity != cfg_.space.identity() || start.seed != cfg_.search.seed ||
      start.strategy != cfg_.search.strategy) {
    fail(jpath + ": the search space, seed or strategy changed since this search started; "
                        "resume needs the same ciq.yaml (or start over with `ciq tune --fresh`)");
    return false;
  }
  // A search killed before its canary passed (or whose canary failed) runs
  // it on resume: the proof that controls reach the compiler is not optional.
  canaryDone_ = prior.canaryDone;
  if (!prior.inputs.is_null())
    if (std::string changed = changedInput(prior.inputs, cfg_); !changed.empty())
      return fail(jpath + ": " + changed + "; results of the old and new inputs must not mix: start over "
                                 "with `ciq tune --fresh --config " + shellQuote(cfg_.path) + "`");
  for (const auto &d : prior.damaged)
    warn(d + "; that line is skipped (its evaluation, if it was one, is measured again under a new id)");
  // A pool that follows the workers keeps the size it started with, and
  // the search its propose_ahead: the same seed and history must give the
  // same pools after a resume, on a host with more or fewer GPUs too.
  cfg_.search.proposeAhead = start.search.proposeAhead;
  if (cfg_.search.poolFollowsWorkers() && start.search.poolSize > 0) {
    cfg_.search.poolSize = start.search.poolSize;
    fitGenerationsToBudget();
  }
  if (!finishedSearchExtends(prior))
    return false;
  // Extending a finished search: the raised budget is what the user asked
  // to spend, and ciq.yaml (generations included) cannot change on a
  // resume. Its own search.generations ended it: without more of them the
  // extension evaluated nothing and only wrote the lock again.
  // Under the binaries rule no number of generations is known to spend a
  // budget (twins cost nothing): the extension proposes until it is met.
  extending_ = prior.done;
  if (prior.done && 1 + cfg_.search.poolSize * cfg_.search.generations < budget_)
    fitGenerationsToBudget();
  evals_ = prior.evaluations;
  priorTrials_ = prior.minimizeTrials;
  priorRounds_ = prior.rounds;
  if (std::string damaged = warm_.fromJson(prior.warm, cfg_); !damaged.empty())
    warn(damaged);
  rehearsals_ = prior.rehearsals;
  applyPriorRehearsals();
  if (!referenceKept())
    return false;
  firstNewId_ = std::max<int>(prior.nextId, (int)evals_.size());
  resumedCount_ = evals_.size();
  verdicts_.resumedEvaluations = (int)resumedCount_;
  inputsRecorded_ = !prior.inputs.is_null();
  return true;
}

// `ciq tune`: a journal of another config or an unfinished search is refused;
// a finished or discarded one is kept beside as journal.jsonl.previous.
bool TuneRun::setPriorSearchAside(const JournalContents &prior, const std::string &jpath) {
  bool unfinished = !prior.evaluations.empty() && !prior.done;
  // A search that ended at its failed baseline has nothing to continue: the
  // next `ciq tune` (the same CMake target, after the build is fixed) starts
  // over, keeping that journal beside (issue 50 item 5: it was refused as an
  // unfinished search).
  bool failedBaselineOnly = prior.evaluations.size() == 1 && !prior.evaluations.front().ok &&
                            prior.evaluations.front().generation == 0;
  if (std::string priorConfig = prior.started ? prior.started->configPath : "?";
      !prior.start.is_null() && priorConfig != cfg_.path && !opts_.fresh && !opts_.canaryOnly) {
    fail(cfg_.runDir + " holds the search of " + priorConfig + "; give " + cfg_.path +
                " its own run_dir:, or pass --fresh to replace that search (its journal and results.csv are kept as journal.jsonl.previous "
                "and results.csv.previous)");
    return false;
  }
  if (unfinished && !failedBaselineOnly && !opts_.fresh && !opts_.canaryOnly) {
    fail(cfg_.runDir + " holds an unfinished search (" + std::to_string(prior.evaluations.size()) +
                " evaluations); continue it with `ciq resume --config " + shellQuote(cfg_.path) +
                "`, or start over with `ciq tune --fresh --config " + shellQuote(cfg_.path) + "`" +
                (cfg_.build.kind == "cmake" && !cfg_.target.empty()
                     ? " (a ciq_tune() target: cmake --build " + shellQuote(cfg_.buildDir) + " --target ciq-tune-fresh-" +
                           cfg_.target + ")"
                     : ""));
    return false;
  }
  if (llvm::sys::fs::exists(jpath)) {
    if (!opts_.canaryOnly)
      warm_.planFromJournal(prior, jpath + ".previous", cfg_);
    // A finished or discarded search is kept beside, never overwritten: its
    // journal and its results.csv (this search writes a new one).
    llvm::sys::fs::rename(jpath, jpath + ".previous");
    std::string csv = cfg_.runDir + "/results.csv", kept = "the earlier search's journal is kept as " + jpath + ".previous";
    if (llvm::sys::fs::exists(csv) && !llvm::sys::fs::rename(csv, csv + ".previous"))
      kept += " and its results as " + csv + ".previous";
    if (!opts_.canaryOnly)
      progress_.note(kept);
  }
  return true;
}

// Opens the journal for appending (a new search writes its start line first)
// and indexes the evaluations a resume carried over.
bool TuneRun::startJournal(const std::string &jpath) {
  // The baseline's output (benchmark.correctness.compare) belongs to this
  // search: a new one measures its own.
  // So are the copies of its programs (ProgramCopies.cpp): candidate
  // ids start again at c0000.
  if (!opts_.resume) {
    llvm::sys::fs::remove(cfg_.runDir + "/reference-output.json");
    removeTree(cfg_.runDir + "/programs");   // a link there is removed, not the folder it leads to
  }
  std::string err;
  if (!journal_.open(jpath, err))
    return fail(err + (opts_.resume ? "; " + diskHint(journal_.errorNumber()) : std::string()));
  // Nothing is recorded without it: a search that cannot write it starts again.
  if (!opts_.resume && !journal_.append(startToJson(startOf(cfg_))))
    return fail(journal_.error() + "; " + remedyFor(journal_.errorNumber()) + ", then start the search again with `ciq tune "
                "--config " + shellQuote(cfg_.path) + "`");
  if (!opts_.resume && warm_ && !journal(warm_.toJson()))
    return false;
  for (size_t i = 0; i < evals_.size(); ++i) {
    byHash_.emplace(evals_[i].candidateHash, i);
    if (evals_[i].ok && !reuseKey(evals_[i]).empty())
      byDevice_.emplace(reuseKey(evals_[i]), i);
  }
  return true;
}

} // namespace ciq
