// The one clock of a tune (issue 55 item 1): the time budget, the phase
// now running and each phase's wall time, the search's own pace, the time
// spent waiting for another process's GPU lock (kept apart: it is not a
// cost of this program), and what the budget cut. The plan of what each
// phase may spend is made from it (engine/search/PhasePlan.h).
#pragma once

#include <chrono>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ciq {

class TuneClock {
public:
  using Clock = std::chrono::steady_clock;

  // A budget of `seconds` for the whole tune (0: none), from `source`
  // ("--time 5m", "search.max_minutes 10") for the summary.
  void setBudget(double seconds, std::string source) {
    budget_ = seconds;
    source_ = std::move(source);
  }
  bool timed() const { return budget_ > 0; }
  double budget() const { return timed() ? budget_ : std::numeric_limits<double>::infinity(); }
  const std::string &source() const { return source_; }
  double elapsed() const { return since(started_); }
  // Seconds left (infinity without a budget); below 0 once it is spent.
  double left() const { return timed() ? budget_ - elapsed() : std::numeric_limits<double>::infinity(); }

  // The phase running now ("" once the tune ended) and how long it ran.
  const std::string &phase() const { return phase_; }
  double inPhase() const { return since(phaseStarted_); }
  // Ends the phase running (its wall time kept, the baseline's not) and
  // begins `name`.
  void enter(const std::string &name);
  // Each phase's wall time in the order they ran; a phase that ran again
  // (the search, given back the time the phases after it did not use) is
  // listed again.
  const std::vector<std::pair<std::string, double>> &phases() const { return phases_; }

  // The search's stretches: their wall clock, less the time waited for
  // another process's GPU lock in them, paces a binary.
  void searchBegins() { searchStarted_ = Clock::now(), waitAtSearchStart_ = foreignWait_; }
  void searchRecorded() {
    searchOwn_ = searchBefore_ + since(searchStarted_) - (foreignWait_ - waitAtSearchStart_);
  }
  void searchEnds() {
    searchRecorded();
    searchBefore_ = searchOwn_;
  }
  double searchSeconds() const { return searchOwn_; }

  // Time this process waited while another held the GPU (GpuLock), in all.
  void setForeignWait(double seconds) { foreignWait_ = seconds; }
  double foreignWait() const { return foreignWait_; }

  // What the budget cut, once each line, in order.
  void cut(const std::string &line);
  const std::vector<std::string> &cuts() const { return cuts_; }

private:
  static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

  double budget_ = 0;
  std::string source_;
  Clock::time_point started_ = Clock::now(), phaseStarted_ = started_, searchStarted_ = started_;
  std::string phase_ = "baseline";
  std::vector<std::pair<std::string, double>> phases_;
  double searchBefore_ = 0, searchOwn_ = 0, foreignWait_ = 0, waitAtSearchStart_ = 0;
  std::vector<std::string> cuts_;
};

} // namespace ciq
