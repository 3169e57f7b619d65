// The search as a stream of candidates (Executor.h: SearchFeed): generations
// proposed by the strategy, handed to the executor as it can take them,
// recorded in the order taken. With search.propose_ahead = a, generation g is
// proposed from the generations before g - a, so it can be proposed while
// the a generations before it are still built and measured: the workers build
// while the GPU measures, and the pools (a function of seed, generation and
// that history) are the same after `ciq resume`.
#include "engine/run/TuneRun.h"

#include <atomic>

namespace ciq {

class TuneFeed : public SearchFeed {
public:
  explicit TuneFeed(StreamHost &h)
      : h_(h), ahead_(std::max(0, h.config().search.proposeAhead)), j_(readJournal(h.journalPath())),
        last_(h.config().search.generations),
        // A pool whose every point, its inert controls dropped, was evaluated
        // before spends nothing: it does not count against
        // search.generations, at most kSpentNothing of them in a row. Without
        // generations of the user's own (or extending a finished search with
        // `ciq resume --max-evaluations`) the search proposes until the
        // budget of distinct binaries is spent.
        openEnded_(h.countsBinaries() && (!h.config().search.generationsSet ||
                                          h.config().search.poolFollowsWorkers() || h.extending())) {}

  std::vector<Evaluation> take(size_t most) override;
  bool more() const override { return !ended_ && !halted_; }
  bool halted() const override { return halted_; }
  void record(Evaluation &e) override;

private:
  bool propose();
  void closeGenerations();
  void end(SearchEnd why) {
    if (!ended_)
      h_.searchEnded(why);
    ended_ = true;
  }
  // The budget is met (or the configuration cap reached) by what is recorded.
  bool budgetEnded() {
    if (h_.budgetLeft())
      return false;
    end(h_.budgetEnd());
    return true;
  }

  StreamHost &h_;
  const int ahead_;
  const JournalContents j_;
  int last_;                       // search.generations, raised by pools that spent nothing
  const bool openEnded_;
  int nothingInARow_ = 0;
  int g_ = 0;                      // the last generation proposed
  std::vector<Point> todo_;        // its points not evaluated yet (a resume evaluated some)
  size_t nextTodo_ = 0;
  int closed_ = 0;                 // generations 1..closed_ are recorded whole
  std::map<int, int> outstanding_; // per generation not closed: taken, not recorded
  // The points of generations [g_ - ahead_, g_]: in flight for the next
  // proposal, which learns from the generations before them.
  std::map<int, std::vector<Point>> proposed_;
  int inFlight() const {
    int n = 0;
    for (const auto &[g, taken] : outstanding_)
      n += taken;
    return n;
  }
  bool ended_ = false;
  std::atomic<bool> halted_{false};
};

std::vector<Evaluation> TuneFeed::take(size_t most) {
  std::vector<Evaluation> out;
  if (h_.stopRequested())
    halted_ = true;
  while (!halted_ && !ended_ && out.size() < most) {
    if (budgetEnded())
      break;
    if (nextTodo_ < todo_.size()) {
      // The candidates in flight may spend what is left of the budget.
      int inFlight = this->inFlight();
      if ((int)h_.room() <= inFlight)
        break;
      Evaluation e = newEvaluation(h_.config().space, todo_[nextTodo_++], g_, h_.nextName((size_t)inFlight));
      e.replay = "ciq replay " + e.candidateId + " --config " + shellQuote(h_.config().path);
      out.push_back(std::move(e));
      ++outstanding_[g_];
      continue;
    }
    closeGenerations();
    if (halted_ || !propose())
      break;
  }
  if (ended_ && !halted_)
    closeGenerations();
  return out;
}

// The next generation's pool, once the generations it learns from are
// recorded: false when it must wait for them (or the search ended).
bool TuneFeed::propose() {
  int next = g_ + 1;
  if (next > last_ && !openEnded_) {
    end(SearchEnd::Generations);
    return false;
  }
  int before = std::max(1, next - ahead_);   // the baseline is always known
  if (closed_ < before - 1 || (int)h_.room() <= inFlight())
    return false;
  std::vector<Point> pool = h_.proposePool(next, before);
  if (pool.empty()) {
    end(SearchEnd::SpaceExhausted);
    return false;
  }
  h_.generationBegins(next, std::max(next, h_.config().search.generations));
  proposed_.erase(proposed_.begin(), proposed_.lower_bound(before));   // recorded: in the history
  std::set<Point> inFlight;
  for (const auto &[h, points] : proposed_)
    inFlight.insert(points.begin(), points.end());
  std::vector<Point> fresh = h_.unspent(pool, next, before, inFlight);
  if (h_.recordingFailed()) {
    halted_ = true;
    return false;
  }
  if (!fresh.empty())
    nothingInARow_ = 0;
  else if (++nothingInARow_ <= kSpentNothing)
    ++last_;
  else if (openEnded_) { // every proposal repeats an evaluated point or a known binary
    end(SearchEnd::NothingNew);
    return false;
  }
  g_ = next;
  proposed_[g_] = fresh;
  todo_ = h_.notEvaluated(g_, fresh);   // a resume evaluated some before the engine was killed
  nextTodo_ = 0;
  return true;
}

void TuneFeed::record(Evaluation &e) {
  --outstanding_[e.generation];
  if (h_.recordTaken(e))
    halted_ = true;
  else if (!halted_) // else the candidates still running when it halted: no generation line
    closeGenerations();
}

// Generations are closed in order, once every point is taken and recorded:
// the journal's "generation" line, and the first generation's verdict.
void TuneFeed::closeGenerations() {
  const auto &evals = h_.evaluations();
  // A search ended by its budget closes the generation it ended in, as one
  // whose points were all evaluated.
  while (closed_ < g_ && (closed_ + 1 < g_ || nextTodo_ == todo_.size() || ended_) && outstanding_[closed_ + 1] == 0) {
    int h = ++closed_;
    outstanding_.erase(h);
    const auto &done = j_.completedGenerations;
    if (std::find(done.begin(), done.end(), h) == done.end() && !h_.journalGeneration(h)) {
      halted_ = true;
      return;
    }
    bool anyOk = std::any_of(evals.begin(), evals.end(), [](const Evaluation &e) { return e.generation == 1 && e.ok; });
    bool any = std::any_of(evals.begin(), evals.end(), [](const Evaluation &e) { return e.generation == 1; });
    if (h == 1 && any && !anyOk && h_.config().search.exitOnFailure) {
      h_.failFirstGeneration();
      halted_ = true;
      return;
    }
  }
}

bool TuneRun::searchGenerations() {
  auto started = std::chrono::steady_clock::now();
  enterPhase("search");
  clock_.searchBegins();
  inSearch_ = true;
  bool done = searchLoop();
  inSearch_ = false;
  clock_.searchEnds();
  verdicts_.searchSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return done;
}

bool TuneRun::searchLoop() {
  TuneFeed feed(static_cast<StreamHost &>(*this));
  executor().stream(feed, knownResults());
  // The strategy may end (generations, nothing new) while candidates that
  // then meet the budget are still in flight: the budget is the reason.
  if (verdicts_.searchEnd && !budgetLeft())
    verdicts_.searchEnd = budgetEnd();
  if (verdicts_.searchEnd == SearchEnd::Time)
    timeCut("the search ended at " + durationText(clock_.elapsed()) + " after " + std::to_string(counted()) + " of " +
            std::to_string(budget_) + " binaries, keeping about " + durationText(afterReserve(0)) +
            " for the finalists, minimization, rehearsal and attribution (from the measured " +
            fmt::value(costs().buildSeconds) + " s a build, " + fmt::value(costs().runSeconds) + " s a run)");
  return streamEnded();
}

} // namespace ciq
