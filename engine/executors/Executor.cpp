#include "engine/executors/Executor.h"

namespace ciq {

void Executor::stream(SearchFeed &feed, const KnownResults &known) {
  while (feed.more() && !feed.halted()) {
    std::vector<Evaluation> batch = feed.take(batchLimit());
    // Nothing is in flight between batches: an empty take means the feed
    // has nothing more to give.
    if (batch.empty())
      return;
    size_t complete = evaluate(batch, known);
    for (size_t k = 0; k < complete; ++k)
      feed.record(batch[k]);
    if (complete < batch.size())
      return;
  }
}

} // namespace ciq
