// The twin rule of every executor. In stream order, a candidate whose
// configuration (command lines and ACF bytes) a recorded evaluation or an
// earlier candidate of the stream had is that one's configuration twin: not
// built, its result copied. One whose built code (the reuse key) a recorded
// evaluation or an earlier candidate had, measured OK, is its device-code
// twin: built, not measured. So two candidates with one binary are measured
// once, whichever finished building first.
//
// Thread-safe: local workers ask while they build at the same time and the
// stream grows (add); a question about candidate k waits only for candidates
// before k (never the other way round, so it cannot deadlock): for their
// identity (their build) and, when one is k's twin, for its result. Slurm
// asks after the batch ran, in order, and never waits.
#pragma once
#include "engine/executors/Executor.h"

#include <condition_variable>
#include <deque>
#include <mutex>

namespace ciq {

class BatchTwins {
public:
  explicit BatchTwins(const KnownResults &known) : known_(known) {}
  BatchTwins(std::vector<Evaluation> &batch, const KnownResults &known);
  // Appends a candidate to the stream; it must outlive this object.
  void add(Evaluation *e);
  // Whether candidate k has a configuration of its own (no recorded or
  // earlier candidate had it): only those are built. Never waits.
  bool ownConfiguration(size_t k);
  // Candidate k's configuration twin (recorded, or earlier and done), or
  // null: then k is built.
  const Evaluation *configurationTwin(size_t k);
  // Candidate k was built (e = its evaluation so far): the evaluation whose
  // result stands for it, or null: then k is measured.
  const Evaluation *deviceTwin(size_t k, const Evaluation &e);
  // Candidate k is complete (whatever happened to it): later ones may read it.
  void finished(size_t k);

private:
  bool identifiedUpTo(size_t k);
  const Evaluation *keep(std::optional<Evaluation> recorded);
  const KnownResults &known_;
  std::deque<Evaluation *> items_;
  std::deque<std::string> hashes_;   // each one's configuration, read when added (the evaluation is written while others read)
  std::deque<std::string> keys_;   // reuse key once built ("" : none)
  std::deque<bool> identified_, done_;
  size_t identifiedPrefix_ = 0;    // candidates before it are all identified
  std::deque<Evaluation> recorded_;   // copies of recorded twins handed out (stable addresses)
  std::mutex m_;
  std::condition_variable cv_;
};

} // namespace ciq
