#include "engine/run/Progress.h"
#include "common/ConsoleLine.h"
#include "common/NumberFormat.h"
#include "engine/search/TimeBudget.h"

#include <cstdio>
#include <unistd.h>

namespace ciq {

void Progress::begin(int budget, bool verbose, const std::string &counts) {
  std::lock_guard<std::mutex> lock(m_);
  budget_ = budget;
  counts_ = counts;
  verbose_ = verbose;
  tty_ = verbose && isatty(STDOUT_FILENO) && getenv("CI") == nullptr;
  start_ = std::chrono::steady_clock::now();
}

void Progress::generation(int g, int total) {
  std::lock_guard<std::mutex> lock(m_);
  generation_ = g;
  generations_ = total;
}

void Progress::clearBar() {
  if (tty_)
    fputs("\r\033[K", stdout);
}

void Progress::drawBar(const std::string &activity) {
  if (!tty_)
    return;
  const int width = 24;
  int filled = budget_ > 0 ? std::min(width, done_ * width / budget_) : 0;
  std::string bar(filled, '#');
  bar += std::string(width - filled, '.');
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string eta = "-";
  if (remaining_ >= 0)
    eta = "~" + durationText(remaining_);
  else if (doneThisRun_ > 0 && budget_ > done_)
    eta = durationText(elapsed / doneThisRun_ * (budget_ - done_));
  printf("\r\033[K[%s] %s gen %d/%d  %d/%d %s  best %s  invalid %d%%  elapsed %s  left %s  %s", bar.c_str(),
         phase_.empty() ? "search" : phase_.c_str(), generation_, generations_, done_, budget_, counts_.c_str(),
         best_.empty() ? "-" : best_.c_str(), configurations_ ? invalid_ * 100 / configurations_ : 0,
         durationText(elapsed).c_str(), eta.c_str(), activity.c_str());
  fflush(stdout);
}

void Progress::building(const std::string &id) {
  std::lock_guard<std::mutex> lock(m_);
  drawBar("building " + id);
}

void Progress::measuring(const std::string &id) {
  std::lock_guard<std::mutex> lock(m_);
  drawBar("measuring " + id);
}

// benchmark.cases: the geometric mean of the ratios, then each case's
// median, ratio to the baseline and runs.
static std::string casesText(const TuneConfig &cfg, const Evaluation &e) {
  const Objective &o = cfg.objectives.front();
  std::string s = o.metric + "=" + (e.scores.count(o.metric) ? fmt::value(e.scores.at(o.metric)) : "-") +
                  " (geomean of case ratios)";
  for (const auto &c : e.cases)
    s += " " + c.name + "=" + fmt::value(c.median) + " " + o.unit + " (" + fmt::ratio(c.ratio) + ", runs=" +
         std::to_string(c.runs.size()) + ")";
  return s;
}

static std::string scoreText(const TuneConfig &cfg, const Evaluation &e) {
  if (!e.cases.empty())
    return casesText(cfg, e);
  std::string s;
  for (const auto &o : cfg.objectives) {
    auto it = e.scores.find(o.metric);
    if (it == e.scores.end())
      continue;
    char buf[96];
    bool unitIsName = o.unit == o.metric || o.unit.empty();
    snprintf(buf, sizeof buf, "%s%s=%s%s%s", s.empty() ? "" : " ", o.metric.c_str(), fmt::value(it->second).c_str(),
             unitIsName ? "" : " ", unitIsName ? "" : o.unit.c_str());
    s += buf;
  }
  if (e.cvPercent >= 0) {
    // One run has no spread: "cv=0.0%" would read as "no noise".
    s += " cv=" + fmt::percent(e.cvPercent, e.runs.empty() ? 2 : e.runs.size());
  }
  if (!e.stoppedBy.empty() && e.duplicateKind.empty()) {
    // The noise needs two runs or more (<0: unknown); "noise=-1.00%" read as a number.
    char buf[96], noise[32] = "";
    if (e.noisePercent >= 0)
      snprintf(noise, sizeof noise, " noise=%.2f%%", e.noisePercent);
    snprintf(buf, sizeof buf, " runs=%zu%s%s", e.runs.size(), noise,
             e.stoppedBy == "racing" ? " (raced: worse than the best)" : "");
    s += buf;
  }
  return s;
}

void Progress::evaluated(const TuneConfig &cfg, const Evaluation &e, const std::vector<Evaluation> &all,
                         const Evaluation *best, int counted) {
  std::lock_guard<std::mutex> lock(m_);
  done_ = counted;
  configurations_ = (int)all.size();
  ++doneThisRun_;
  invalid_ = 0;
  for (const auto &x : all)
    invalid_ += !x.ok;
  best_ = best ? best->candidateId + " " + scoreText(cfg, *best) : "";
  if (!verbose_)
    return;
  clearBar();
  std::string dup = e.duplicateOf.empty()
                        ? ""
                        : " (same " + std::string(e.duplicateKind == "config" ? "configuration" : "device code") +
                              " as " + e.duplicateOf + ")";
  // INVALID lines carry the reason, the log path and at most the compiler's
  // first error line (in the message), never pages of compiler output.
  // Long kernel names elided (ConsoleLine.h): results.csv has them whole.
  printf("[%d/%d] gen %d %s %s %s%s  %s\n", done_, budget_, e.generation, e.candidateId.c_str(),
         e.ok ? "OK     " : "INVALID",
         consoleLine(e.ok ? scoreText(cfg, e) : e.reason + ": " + e.message).c_str(), dup.c_str(),
         e.generation == 0 ? "(default compile)" : consoleLine(e.rendered.summary()).c_str());
  drawBar("");
  fflush(stdout);
}

void Progress::note(const std::string &line) {
  std::lock_guard<std::mutex> lock(m_);
  if (!verbose_)
    return;
  clearBar();
  printf("%s\n", consoleLine(line).c_str());
  drawBar("");
  fflush(stdout);
}

void Progress::phase(const std::string &name, double remainingSeconds) {
  std::lock_guard<std::mutex> lock(m_);
  phase_ = name;
  remaining_ = remainingSeconds;
  drawBar("");
}

void Progress::end() {
  std::lock_guard<std::mutex> lock(m_);
  clearBar();
}

nlohmann::json Progress::status(const TuneConfig &cfg, const std::vector<Evaluation> &all) const {
  std::lock_guard<std::mutex> lock(m_);
  return {{"target", cfg.target}, {"run_dir", cfg.runDir}, {"evaluations", configurations_}, {"distinct_binaries", done_}, {"budget", budget_},
          {"generation", generation_}, {"generations", generations_}, {"invalid", invalid_}, {"best", best_},
          {"last", all.empty() ? "" : all.back().candidateId}};
}

} // namespace ciq
