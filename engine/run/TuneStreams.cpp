// TuneRun as the host of the search's streams of candidates (StreamHost.h):
// what the command-line search (TuneSearch.cpp) and the per-kernel stage
// (TuneKernelStage.cpp) ask of the tune beyond reading it, and how a stream
// that ended leaves the tune (streamEnded). Both call into this file and it
// calls neither, so the two stages form no call circle.
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
  if (kernelReserve_ > 0)   // stage 1 of a per-kernel search
    pool = withoutKernelControls(cfg_.space, pool);
  return pool;
}

bool TuneRun::streamEnded() {
  if (!interrupted_.empty())
    return stopInterrupted();
  if (recordingFailed_ || outcome_.status == TuneOutcome::Status::Failed)
    return false;
  if (stopRequested()) {
    if (slurm_)
      slurm_->cancelAll();
    progress_.note("stopped after " + evals_.back().candidateId + "; continue with `ciq resume --config " +
                   shellQuote(cfg_.path) + "`");
    outcome_.status = TuneOutcome::Status::Stopped;
    return false;
  }
  return true;
}

} // namespace ciq
