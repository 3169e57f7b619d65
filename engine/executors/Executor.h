// Where candidates are built and measured: this host's workers
// (LocalExecutor.h: one build tree each, sharing the GPUs) or Slurm jobs
// (executors/slurm/SlurmExecutor.h). Both take candidates in stream order and
// apply one twin rule (BatchTwins.h), so the journal of a search does not
// depend on the executor or on which candidate finished first.
#pragma once
#include "engine/record/Evaluation.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// What the search recorded so far. Asked from the executor's threads while
// the search records: each answer is a copy.
struct KnownResults {
  // The recorded evaluation with these command lines and ACF bytes.
  std::function<std::optional<Evaluation>(const std::string &candidateHash)> byConfiguration;
  // The recorded evaluation, measured OK, with the code of `built`.
  std::function<std::optional<Evaluation>(const Evaluation &built)> byDeviceCode;
  // What must be equal for a result to be reused ("" : never reused).
  std::function<std::string(const Evaluation &)> reuseKey;
};

// The search as the executor sees it (run/TuneSearch.cpp): candidates to
// take, results to hand back. Called on the thread that called stream(),
// except halted(), which any thread may ask.
class SearchFeed {
public:
  virtual ~SearchFeed() = default;
  // Up to `most` more candidates (header set: id, generation, point,
  // rendered, hash), after every one taken before. Empty while more() is
  // true: nothing until more results are recorded.
  virtual std::vector<Evaluation> take(size_t most) = 0;
  // Whether take() may give more: false once the budget is met, the space
  // exhausted or the search halted.
  virtual bool more() const = 0;
  // No candidate is started any more (`ciq stop`, a failure, a disk fault):
  // the ones already started end and are recorded.
  virtual bool halted() const = 0;
  // A complete candidate, handed back in the order taken.
  virtual void record(Evaluation &e) = 0;
};

class Executor {
public:
  virtual ~Executor() = default;
  // How many candidates are evaluated at once.
  virtual size_t parallelism() const = 0;
  // How many candidates one batch may hold (what a kill -9 may cost).
  virtual size_t batchLimit() const = 0;
  // Evaluates the batch in place (each header set). Returns how many
  // candidates, from the first, are complete: all of them, or fewer when
  // `ciq stop` came first; only those may be recorded (`ciq resume`
  // evaluates the others).
  virtual size_t evaluate(std::vector<Evaluation> &batch, const KnownResults &known) = 0;
  // The search: takes candidates from the feed and hands each back complete,
  // in the order taken, until the feed has no more and every candidate taken
  // is recorded (or the feed halted). This one evaluates batches of up to
  // batchLimit() one after the other; the local workers take candidates
  // while earlier ones are measured (LocalExecutor.h).
  virtual void stream(SearchFeed &feed, const KnownResults &known);
};

} // namespace ciq
