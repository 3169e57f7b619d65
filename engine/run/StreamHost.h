// What the search's streams of candidates (Executor.h: SearchFeed) need of
// the tune: the command-line search's generations (TuneFeed, TuneSearch.cpp)
// and the per-kernel stage's rounds (KernelFeed, TuneKernelStage.cpp).
// TuneRun implements it; the feeds see the tune through this and nothing
// else, so what a feed may read or change is the list below.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"
#include "engine/search/Budget.h"
#include "engine/search/KernelSearch.h"

#include <set>
#include <string>
#include <vector>

namespace ciq {

class StreamHost {
public:
  virtual ~StreamHost() = default;

  virtual const TuneConfig &config() const = 0;
  // The evaluations recorded so far (the feeds run in the recording thread).
  virtual const std::vector<Evaluation> &evaluations() const = 0;
  // The points of `pool` not yet evaluated in `generation` (a resume
  // evaluated some before the engine was killed).
  virtual std::vector<Point> notEvaluated(int generation, const std::vector<Point> &pool) const = 0;

  // The budget (Budget.h): what is counted and compiled, the stage's room.
  virtual bool countsBinaries() const = 0;
  virtual int budget() const = 0;
  virtual int counted() const = 0;
  virtual int compiled() const = 0;
  virtual int configurationCap() const = 0;
  virtual bool budgetLeft() const = 0;
  virtual SearchEnd budgetEnd() const = 0;
  virtual size_t room() const = 0;
  // A finished search resumed with a raised budget.
  virtual bool extending() const = 0;

  // The id of the k-th candidate taken after those recorded.
  virtual std::string nextName(size_t k) const = 0;
  // `ciq stop` was asked for.
  virtual bool stopRequested() = 0;
  // Records a candidate the feed took; true when the stream must halt (a
  // stop, a killed build, a stale build, a journal or results.csv that
  // could not be written).
  virtual bool recordTaken(Evaluation &e) = 0;
  virtual bool recordingFailed() const = 0;
  virtual void note(const std::string &line) = 0;

  // The command-line search (TuneFeed).
  virtual const std::string &journalPath() const = 0;
  // The strategy's pool of `generation`, learnt from the generations before
  // `before` (a warm start's points first, per-kernel controls masked).
  virtual std::vector<Point> proposePool(int generation, int before) = 0;
  // The pool minus what cannot give a new binary (TuneRun::unspent).
  virtual std::vector<Point> unspent(std::vector<Point> pool, int generation, int before,
                                     const std::set<Point> &inFlight) = 0;
  virtual void generationBegins(int generation, int of) = 0;
  // The journal's "generation" line: false when it could not be written.
  virtual bool journalGeneration(int generation) = 0;
  virtual void searchEnded(SearchEnd why) = 0;
  virtual bool failFirstGeneration() = 0;

  // The per-kernel stage (KernelFeed).
  virtual const std::vector<KernelPlan> &stagePlans() const = 0;
  // The binaries the time plan keeps for the stage's combinations.
  virtual void keepForCombinations(int binaries) = 0;
  // A warm start's first point (nullptr: none).
  virtual const Point *warmPoint() const = 0;
};

} // namespace ciq
