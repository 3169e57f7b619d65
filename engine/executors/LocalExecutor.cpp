#include "engine/executors/LocalExecutor.h"
#include "engine/executors/BatchTwins.h"
#include "engine/executors/Pipeline.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace ciq {

size_t LocalExecutor::evaluate(std::vector<Evaluation> &batch, const KnownResults &known) {
  BatchTwins twins(batch, known);
  auto one = [&](size_t k, Worker &w) {
    Evaluation &e = batch[k];
    if (const Evaluation *t = twins.configurationTwin(k))
      e = configTwin(*t, e);
    else
      evaluateOne_(e, w, [&](const Evaluation &built) { return twins.deviceTwin(k, built); });
    twins.finished(k);
  };
  auto stopped = [&] { return stop_ && stop_(); };
  if (workers_.size() == 1) { // one worker: no thread
    size_t k = 0;
    for (; k < batch.size() && !(k > 0 && stopped()); ++k)
      one(k, *workers_[0]);
    return k;
  }
  std::vector<char> done(batch.size(), 0);   // char, not bool: each thread writes its own
  // Each worker takes the next candidate in pool order when its last one is
  // done: every candidate before k has been taken when k is, so the waits in
  // BatchTwins (only ever on earlier candidates) always end.
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (size_t w = 0; w < std::min(workers_.size(), batch.size()); ++w)
    threads.emplace_back([&, w] {
      for (size_t k; !stopped() && (k = next++) < batch.size();) {
        one(k, *workers_[w]);
        done[k] = 1;
      }
    });
  for (auto &t : threads)
    t.join();
  return std::find(done.begin(), done.end(), 0) - done.begin();
}

} // namespace ciq
