#include "engine/executors/LocalExecutor.h"
#include "engine/executors/Pipeline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace ciq {

void LocalExecutor::evaluateOne(BatchTwins &twins, size_t k, Evaluation &e, Worker &w) {
  if (const Evaluation *t = twins.configurationTwin(k))
    e = configTwin(*t, e);
  else
    evaluateOne_(e, w, [&](const Evaluation &built) { return twins.deviceTwin(k, built); });
  twins.finished(k);
}

size_t LocalExecutor::evaluate(std::vector<Evaluation> &batch, const KnownResults &known) {
  BatchTwins twins(batch, known);
  auto stopped = [&] { return stop_ && stop_(); };
  if (workers_.size() == 1) { // one worker: no thread
    size_t k = 0;
    for (; k < batch.size() && !(k > 0 && stopped()); ++k)
      evaluateOne(twins, k, batch[k], *workers_[0]);
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
        evaluateOne(twins, k, batch[k], *workers_[w]);
        done[k] = 1;
      }
    });
  for (auto &t : threads)
    t.join();
  return std::find(done.begin(), done.end(), 0) - done.begin();
}

namespace {

// The candidates of one stream: taken by the workers in order, recorded by
// the calling thread in order. A deque: adding one keeps the others where
// the workers hold them.
struct Stream {
  std::deque<Evaluation> items;
  std::deque<char> done;
  size_t taken = 0, recorded = 0;
  bool closing = false;   // no worker starts another candidate
  std::mutex m;
  std::condition_variable cv;
  bool allTakenDone() const {
    for (size_t k = recorded; k < taken; ++k)
      if (!done[k])
        return false;
    return true;
  }
};

} // namespace

void LocalExecutor::stream(SearchFeed &feed, const KnownResults &known) {
  if (workers_.size() == 1)
    return Executor::stream(feed, known);
  Stream s;
  BatchTwins twins(known);
  auto halted = [&] { return feed.halted() || (stop_ && stop_()); };
  std::vector<std::thread> threads;
  for (auto &worker : workers_)
    threads.emplace_back([&, w = worker.get()] {
      std::unique_lock<std::mutex> lock(s.m);
      for (;;) {
        s.cv.wait(lock, [&] { return s.closing || s.taken < s.items.size(); });
        if (s.closing || halted())
          return;
        size_t k = s.taken++;
        Evaluation &e = s.items[k];
        lock.unlock();
        s.cv.notify_all();   // the calling thread refills what waits
        evaluateOne(twins, k, e, *w);
        lock.lock();
        s.done[k] = 1;
        s.cv.notify_all();
      }
    });
  std::unique_lock<std::mutex> lock(s.m);
  for (;;) {
    while (s.recorded < s.items.size() && s.done[s.recorded]) {
      // A copy: workers may still read the item (a later twin's source).
      Evaluation e = s.items[s.recorded];
      lock.unlock();
      feed.record(e);
      lock.lock();
      ++s.recorded;
    }
    bool stop = halted();
    size_t waiting = s.items.size() - s.taken;
    if (!stop && waiting < workers_.size() && feed.more()) {
      lock.unlock();
      std::vector<Evaluation> more = feed.take(workers_.size() - waiting);
      lock.lock();
      for (auto &e : more) {
        s.items.push_back(std::move(e));
        s.done.push_back(0);
        twins.add(&s.items.back());
      }
      if (!more.empty()) {
        s.cv.notify_all();
        continue;
      }
    }
    // Ends when nothing is left to record: the feed has no more (or halted,
    // then candidates not started are dropped) and every started one is in.
    bool nothingMore = stop || !feed.more();
    if (nothingMore && s.allTakenDone() && (stop || s.taken == s.items.size()) && s.recorded == s.taken)
      break;
    // A worker's completion wakes this; `ciq stop` is polled.
    s.cv.wait_for(lock, std::chrono::milliseconds(200));
  }
  s.closing = true;
  lock.unlock();
  s.cv.notify_all();
  for (auto &t : threads)
    t.join();
}

} // namespace ciq
