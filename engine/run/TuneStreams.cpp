// TuneRun as the host of the search's streams of candidates (StreamHost.h):
// what the command-line search (TuneSearch.cpp) and the per-kernel stage
// (TuneKernelStage.cpp) ask of the tune beyond reading it.
#include "engine/run/TuneRun.h"
#include "engine/search/WarmStart.h"

namespace ciq {

std::vector<Point> TuneRun::notEvaluated(int generation, const std::vector<Point> &pool) const {
  std::vector<Point> out;
  std::shared_lock<std::shared_mutex> lock(evalsMutex_);
  for (const auto &p : pool)
    if (std::none_of(evals_.begin(), evals_.end(),
                     [&](const Evaluation &e) { return e.generation == generation && e.point == p; }))
      out.push_back(p);
  return out;
}

bool TuneRun::recordTaken(Evaluation &e) {
  record(e);
  if (!interrupted_.empty() || recordingFailed_)
    return true;
  if (e.reason == reason::StaleBuild) {
    fail(e.message);
    return true;
  }
  return stopRequested();
}

std::vector<Point> TuneRun::proposePool(int generation, int before) {
  std::vector<Point> pool = strategy_->pool(generation, history(before));
  if (generation == 1 && warm_)   // a warm start: the earlier winner and next best first
    pool = warmFirst(warm_->points, pool);
  maskKernelControls(pool);
  return pool;
}

} // namespace ciq
