// executor: local. The workers (Workers.h: each its own build tree and
// daemon) take the batch's candidates in pool order, each the next one when
// its last is done, so candidates compile side by side while a GPU measures
// one at a time (its GpuLock):
// propose -> compile -> identify -> measure -> record. A built candidate is
// identified by its code before any GPU time is spent (BatchTwins.h): one
// that repeats a measured binary is not measured.
#pragma once
#include "engine/executors/BatchTwins.h"
#include "engine/executors/Executor.h"
#include "engine/executors/Workers.h"

#include <memory>

namespace ciq {

class LocalExecutor : public Executor {
public:
  // How one candidate is built and measured in one worker: the caller's
  // options (progress, racing, logs) around evaluateCandidate (Pipeline.h).
  // deviceTwin: the evaluation whose result stands for the built candidate,
  // or null (then it is measured).
  using EvaluateOne = std::function<void(Evaluation &e, Worker &w,
                                         const std::function<const Evaluation *(const Evaluation &)> &deviceTwin)>;
  // stop: `ciq stop` was asked for; no worker takes another candidate.
  LocalExecutor(std::vector<std::unique_ptr<Worker>> &workers, EvaluateOne evaluateOne, std::function<bool()> stop)
      : workers_(workers), evaluateOne_(std::move(evaluateOne)), stop_(std::move(stop)) {}
  size_t parallelism() const override { return workers_.size(); }
  // Results are recorded after each batch: two rounds of the workers keep
  // them streaming and bound what a kill -9 costs.
  size_t batchLimit() const override { return 2 * workers_.size(); }
  size_t evaluate(std::vector<Evaluation> &batch, const KnownResults &known) override;
  // Several workers: each takes the next candidate of the stream when its
  // last one is done, and the feed is asked for more whenever fewer
  // candidates wait than there are workers, so a worker builds the next
  // candidates (the next generation's too, with search.propose_ahead) while
  // the GPU measures; results are recorded in stream order as they complete.
  // One worker: batches (Executor::stream).
  void stream(SearchFeed &feed, const KnownResults &known) override;

private:
  // Candidate k of the stream in worker w: its configuration twin's result,
  // or built, identified and (unless a device twin) measured.
  void evaluateOne(BatchTwins &twins, size_t k, Evaluation &e, Worker &w);
  std::vector<std::unique_ptr<Worker>> &workers_;
  EvaluateOne evaluateOne_;
  std::function<bool()> stop_;
};

} // namespace ciq
