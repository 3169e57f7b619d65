#include "engine/search/TimeBudget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ciq {

const char *const kAfterSearchNames[kAfterSearchPhases] = {"finalists", "minimization", "rehearsal", "attribution"};

namespace {

// A number and one unit, in seconds, whatever its size; nullopt when the
// text is not of that form.
std::optional<double> durationValue(const std::string &text) {
  if (text.size() < 2)
    return std::nullopt;
  char unit = text.back();
  double scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
  std::string number = text.substr(0, text.size() - 1);
  // Digits and at most one point: no sign, exponent, spaces or hex.
  if (scale == 0 || number.empty() || number.find_first_not_of("0123456789.") != std::string::npos ||
      std::count(number.begin(), number.end(), '.') > 1 || number == ".")
    return std::nullopt;
  double v = std::strtod(number.c_str(), nullptr);
  if (!std::isfinite(v * scale))
    return std::nullopt;
  return v * scale;
}

} // namespace

std::optional<double> parseDuration(const std::string &text) {
  auto v = durationValue(text);
  if (!v || *v < kLeastDuration || *v > kMostDuration)
    return std::nullopt;
  return v;
}

std::string durationError(const std::string &what, const std::string &text) {
  auto v = durationValue(text);
  if (v && *v < kLeastDuration)
    return what + ": '" + text + "' is under 1s, less than any tune can use; give at least 1s (90s, 10m, 1.5h)";
  if (v)
    return what + ": '" + text + "' is over 1000h; give at most 1000h, or no time budget (the binary budget alone)";
  return what + ": '" + text + "' is not a duration; expected a positive number and a unit, s, m or h (90s, 10m, 1.5h)";
}

std::string durationText(double seconds) {
  char buf[48];
  // Past what a long holds (--time 100000000000000000000h parses), lround
  // is undefined: it printed -9223372036854775808s.
  if (!(seconds < 1e15)) {
    snprintf(buf, sizeof buf, "%.3gh", seconds / 3600);
    return buf;
  }
  long s = std::lround(std::max(0.0, seconds));
  if (s < 60)
    snprintf(buf, sizeof buf, "%lds", s);
  else if (s < 3600)
    snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else
    snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  return buf;
}

PhaseCosts measuredCosts(const std::vector<Evaluation> &evals) {
  PhaseCosts c;
  double buildMs = 0, measureMs = 0, candidateMs = 0;
  long builds = 0, runs = 0, candidates = 0;
  // The baseline's build is the whole program's (host code, links); a
  // candidate's rebuilds its CUDA objects: once one has, the baseline's is
  // not the cost of a build any more.
  bool candidateBuilt = std::any_of(evals.begin(), evals.end(), [](const Evaluation &e) {
    return e.generation > 0 && e.duplicateKind != "config" && e.buildMs > 0;
  });
  for (const auto &e : evals)
    if (e.generation == 0 && e.buildMs > 0)
      c.wholeBuildSeconds = std::max(c.wholeBuildSeconds, e.buildMs / 1000);
  auto runsOf = [](const Evaluation &e) {
    size_t n = e.runs.size();
    for (const auto &k : e.cases)
      n += k.runs.size();
    return n > 0 && e.measureMs > 0 ? (long)n : 0L;
  };
  for (const auto &e : evals) {
    if (e.duplicateKind == "config" || e.buildMs <= 0 || (candidateBuilt && e.generation == 0))
      continue;   // not built: a configuration twin reused a result
    buildMs += e.buildMs;
    ++builds;
    if (long n = runsOf(e)) {
      measureMs += e.measureMs;
      runs += n;
    }
    candidateMs += e.buildMs + e.measureMs;
    ++candidates;
  }
  // The candidates built so far ran nothing themselves (device-code twins
  // take their twin's runs): the baseline's runs cost the same. Without
  // them a run cost 0 s, and the phases after the search were planned at
  // a third of what they took (--time 15s: "keeping about 4s", then 12s).
  if (!runs)
    for (const auto &e : evals)
      if (long n = e.generation == 0 ? runsOf(e) : 0) {
        measureMs += e.measureMs;
        runs += n;
      }
  if (builds)
    c.buildSeconds = buildMs / builds / 1000;
  if (runs)
    c.runSeconds = measureMs / runs / 1000;
  if (candidates)
    c.candidateSeconds = candidateMs / candidates / 1000;
  return c;
}

// The search keeps copies of its best programs (the finalists build
// nothing when it does); a
// minimization trial builds its reduced point only, the attribution the
// rows between the baseline and the winner; the rehearsal builds every
// object again and links.
std::vector<double> afterSearchSeconds(const PhaseCosts &c, const AfterSearchShape &s) {
  double run = s.runtime ? c.runSeconds * s.rounds * std::max(1, s.cases) : 0;
  int finalists = std::max(1, s.finalists);
  int trials = std::min(s.controls, 8);   // whole groups first: rarely more steps
  int rows = s.controls > 1 ? 4 : 2;
  std::vector<double> out(kAfterSearchPhases, 0);
  out[0] = s.runtime ? (1 + finalists) * ((s.programsKept ? 0 : c.buildSeconds) + run) : 0;
  out[1] = trials * (c.buildSeconds + 2 * run);
  out[2] = s.rehearsal ? std::max(c.buildSeconds, c.wholeBuildSeconds) : 0;
  out[3] = (rows - 2) * c.buildSeconds + rows * run;
  // A winner of one control: its one comparison and its attribution are
  // the baseline against the winner, judged on the finalists' runs.
  if (s.runtime && s.controls <= 1)
    out[1] = out[3] = 0;
  return out;
}

} // namespace ciq
