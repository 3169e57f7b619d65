#include "engine/analysis/Report.h"
#include "common/JsonRead.h"
#include "common/NumberFormat.h"

#include "engine/analysis/Diagnose.h"
#include "engine/analysis/ReportKernels.h"
#include "engine/measure/Stats.h"
#include "common/Subprocess.h"
#include "engine/record/WinnerOrder.h"

#include <algorithm>
#include <cmath>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>
#include <map>
#include <set>
#include <sstream>

namespace ciq {

namespace {

std::string join(const std::string &dir, const std::string &name) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, name);
  return std::string(p);
}

bool writeText(const std::string &path, const std::string &text, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = path + ": cannot be written (" + ec.message() + ")";
    return false;
  }
  os << text;
  return true;
}

// A string inside a gnuplot double-quoted string.
std::string gpQuote(const std::string &s) {
  std::string out = "\"";
  for (char c : s)
    out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}
std::string num(double v) {
  std::ostringstream o;
  o.precision(10);
  o << v;
  return o.str();
}

// Whether an evaluation measured a binary of its own (issue 32 item 11): a
// configuration that repeated an earlier one, or whose device code an
// earlier candidate already had, reused that result; the plots count what
// was measured, so each binary is one point.
struct DistinctBinaries {
  std::set<std::string> seen;
  bool first(const RecordedEval &e) {
    if (!e.duplicateOf.empty())
      return false;
    return e.deviceCodeSha256.empty() || seen.insert(e.deviceCodeSha256).second;
  }
};

const char *kTerminal =
    "set terminal svg size 860,460 dynamic noenhanced font 'sans,12' background rgb 'white'\n"
    "set grid\nset key top right\nset offsets graph 0.04, graph 0.04, graph 0.06, graph 0.06\n";

struct Plotter {
  const RunData &run;
  std::string dir, gnuplot;
  std::vector<std::string> svgs;

  std::string unitLabel() const {
    for (const auto &e : run.evals)
      if (!e.unit.empty())
        return "score (" + e.unit + ", " + run.direction + "d)";
    return "score (" + run.direction + "d)";
  }

  bool plot(const std::string &name, const std::string &data, const std::string &script,
            std::string &error) {
    std::string dat = join(dir, name + ".dat"), gp = join(dir, name + ".gp"),
                svg = join(dir, name + ".svg");
    std::string full = std::string(kTerminal) + "set output " + gpQuote(svg) + "\n" +
                       "datafile = " + gpQuote(dat) + "\n" + script;
    if (!writeText(dat, data, error) || !writeText(gp, full, error))
      return false;
    SubprocessOptions opts;
    opts.timeoutSeconds = 120;
    opts.mergeStderrIntoStdout = true;
    auto r = runSubprocess({gnuplot, gp}, opts);
    if (r.spawnFailed || r.timedOut || r.exitCode != 0) {
      std::string out = r.out;
      std::replace(out.begin(), out.end(), '\n', ' ');
      error = "gnuplot failed on " + gp + " (" +
              (r.timedOut ? std::string("timed out") : "exit " + std::to_string(r.exitCode)) +
              "): " + out.substr(0, 300);
      return false;
    }
    svgs.push_back(svg);
    return true;
  }

  // Best score so far after each scored evaluation, with the baseline level.
  bool best(std::string &error) {
    std::ostringstream d;
    std::optional<double> best;
    int i = 0;
    DistinctBinaries distinct;
    for (const auto &e : run.evals) {
      if (!distinct.first(e))
        continue;
      ++i;
      if (!e.ok || !e.score)
        continue;
      if (!best || run.better(*e.score, *best))
        best = *e.score;
      d << i << " " << num(*best) << " " << num(*e.score) << "\n";
    }
    if (!best)
      return true;
    std::string s = "set title 'Best score against distinct binaries measured'\nset xlabel 'distinct binary'\n"
                    "set ylabel " + gpQuote(unitLabel()) + "\n";
    const RecordedEval *b = run.baseline();
    if (b && b->ok && b->score)
      s += "set arrow from graph 0, first " + num(*b->score) + " to graph 1, first " +
           num(*b->score) + " nohead dt 2 lc rgb '#888888'\n"
           "set label 'baseline' at graph 0.01, first " + num(*b->score) + " offset 0,0.6\n";
    s += "plot datafile using 1:3 with points pt 7 ps 0.5 lc rgb '#9ab' title 'candidate', "
         "datafile using 1:2 with steps lw 2 lc rgb '#1f5fa8' title 'best so far'\n";
    return plot("best", d.str(), s, error);
  }

  // Quartiles of the scores of each generation as candlesticks.
  // Only for the genetic strategy, whose generations are populations; tpe's
  // and random's "generations" are single proposals.
  bool generations(std::string &error) {
    if (run.started && run.started->search.strategy != "genetic" && run.started->strategy != "genetic")
      return true;
    std::map<int, std::vector<double>> byGen;
    for (const auto &e : run.evals)
      if (e.ok && e.score)
        byGen[e.generation].push_back(*e.score);
    if (byGen.empty())
      return true;
    std::ostringstream d;
    for (auto &[g, v] : byGen) {
      std::sort(v.begin(), v.end());
      auto q = [&](double f) { return v[size_t(std::lround(f * double(v.size() - 1)))]; };
      d << g << " " << num(v.front()) << " " << num(q(0.25)) << " " << num(median(v)) << " "
        << num(q(0.75)) << " " << num(v.back()) << " " << v.size() << "\n";
    }
    std::string s =
        "set title 'Score distribution per generation (min, quartiles, median, max)'\n"
        "set xlabel 'generation'\nset ylabel " + gpQuote(unitLabel()) + "\n"
        "set xrange [" + num(byGen.begin()->first - 0.7) + ":" + num(byGen.rbegin()->first + 0.7) +
        "]\nset xtics 1\nset boxwidth 0.5\nset style fill solid 0.3\n"
        "plot datafile using 1:3:2:6:5 with candlesticks whiskerbars lc rgb '#1f5fa8' "
        "title 'scores', datafile using 1:4:4:4:4 with candlesticks lw 2 lc rgb '#c0392b' "
        "title 'median'\n";
    return plot("generations", d.str(), s, error);
  }

  // Every scored candidate's score relative to the baseline, sorted.
  bool scurve(std::string &error) {
    const RecordedEval *b = run.baseline();
    if (!b || !b->ok || !b->score || *b->score == 0)
      return true;
    std::vector<double> ratios;
    DistinctBinaries distinct;
    distinct.first(*b);
    for (const auto &e : run.evals)
      if (!e.baseline && distinct.first(e) && e.ok && e.score)
        ratios.push_back(*e.score / *b->score);
    if (ratios.empty())
      return true;
    std::sort(ratios.begin(), ratios.end());
    if (run.direction == "maximize")
      std::reverse(ratios.begin(), ratios.end());
    std::ostringstream d;
    for (size_t i = 0; i < ratios.size(); ++i)
      d << i + 1 << " " << num(ratios[i]) << "\n";
    std::string better = run.direction == "maximize" ? "above" : "below";
    std::string s = "set title 'Every distinct binary against the baseline, sorted (S-curve)'\n"
                    "set xlabel 'binary rank'\nset ylabel 'score / baseline score (" +
                    better + " 1 is better)'\n"
                    "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#888'\n"
                    "plot datafile using 1:2 with linespoints pt 7 ps 0.5 lc rgb '#1f5fa8' "
                    "title 'candidate'\n";
    return plot("scurve", d.str(), s, error);
  }

  // The first two objectives: every candidate, and the non-dominated ones.
  // Only for a run ranked by non-dominated sorting (pareto: true): else the
  // winner is the lexicographic best, and a front would mislead.
  bool pareto(std::string &error) {
    if (run.objectiveNames.size() < 2 || (run.started && !run.started->pareto))
      return true;
    const std::string &x = run.objectiveNames[0], &y = run.objectiveNames[1];
    std::string dx = run.direction, dy = run.objectives().size() > 1 ? run.objectives()[1].direction : "minimize";
    std::vector<std::pair<double, double>> pts;
    for (const auto &e : run.evals)
      if (e.ok && e.objectives.count(x) && e.objectives.count(y))
        pts.emplace_back(e.objectives.at(x), e.objectives.at(y));
    if (pts.empty())
      return true;
    auto betterOrEq = [](double a, double b, const std::string &dir) {
      return dir == "maximize" ? a >= b : a <= b;
    };
    std::vector<std::pair<double, double>> front;
    for (const auto &p : pts) {
      bool dominated = false;
      for (const auto &q : pts)
        dominated |= q != p && betterOrEq(q.first, p.first, dx) && betterOrEq(q.second, p.second, dy);
      if (!dominated)
        front.push_back(p);
    }
    std::sort(front.begin(), front.end());
    front.erase(std::unique(front.begin(), front.end()), front.end());
    std::ostringstream d;
    for (const auto &p : pts)
      d << num(p.first) << " " << num(p.second) << "\n";
    d << "\n\n";
    for (const auto &p : front)
      d << num(p.first) << " " << num(p.second) << "\n";
    std::string s = "set title 'Pareto front of " + x + " and " + y + "'\n"
                    "set xlabel " + gpQuote(x + " (" + dx + "d)") + "\nset ylabel " +
                    gpQuote(y + " (" + dy + "d)") + "\n"
                    "plot datafile index 0 using 1:2 with points pt 7 ps 0.6 lc rgb '#9ab' "
                    "title 'candidate', datafile index 1 using 1:2 with linespoints pt 7 ps 1 "
                    "lw 2 lc rgb '#c0392b' title 'Pareto front'\n";
    return plot("pareto", d.str(), s, error);
  }
};

// The run's best as the engine's winner choice ranks it (WinnerOrder.h):
// every objective in ciq.yaml order, then the fewest controls, then the
// earliest; nullptr when nothing scored.
const RecordedEval *bestByWinnerOrder(const RunData &run) {
  std::vector<std::string> directions;
  for (const auto &o : run.objectives())
    directions.push_back(o.direction);
  std::vector<WinnerKey> keys;
  for (size_t i = 0; i < run.evals.size(); ++i) {
    const RecordedEval &e = run.evals[i];
    WinnerKey k{e.ok && e.score, {}, 0, i};
    for (size_t m = 0; m < run.objectiveNames.size(); ++m) {
      auto it = e.objectives.find(run.objectiveNames[m]);
      double v = it == e.objectives.end() ? 0 : it->second;   // as normalizedObjectives
      bool maximize = m < directions.size() ? directions[m] == "maximize" : m == 0 && run.direction == "maximize";
      k.objectives.push_back(maximize ? -v : v);
    }
    auto controls = nlohmann::json::parse(e.controls, nullptr, false);
    k.controls = controls.is_object() ? controls.size() : 0;
    keys.push_back(std::move(k));
  }
  auto best = std::min_element(keys.begin(), keys.end(), winnerBefore);
  return best == keys.end() || !best->ok ? nullptr : &run.evals[best->index];
}

std::string summaryTable(const RunData &run) {
  size_t invalid = 0;
  for (const auto &e : run.evals)
    invalid += !e.ok;
  const RecordedEval *bestE = bestByWinnerOrder(run);
  const RecordedEval *b = run.baseline();
  std::ostringstream o;
  auto row = [&](const std::string &k, const std::string &v) {
    o << "<tr><th>" << htmlEscape(k) << "</th><td>" << htmlEscape(v) << "</td></tr>\n";
  };
  o << "<table class='summary'>\n";
  row("run directory", run.dir);
  row("evaluations", std::to_string(run.evals.size()) + " (" + std::to_string(invalid) +
                         " INVALID)");
  row("direction", run.direction);
  std::string stopped = stoppedBeforeVerdict(run);
  if (!stopped.empty())
    row("search", stopped);
  std::string best = stopped.empty() ? "best candidate" : "best candidate so far";
  if (b && b->ok && b->score)
    row("baseline score", fmt::value(*b->score) + " " + b->unit);
  if (bestE == b && b) {
    row(best, b->id + " (the baseline: no candidate beat the default compile)");
  } else if (bestE) {
    // The name the summary, the lock and validate give the winner: its
    // minimized build (<id>-min) where minimization dropped controls.
    const RecordedEval *min = nullptr;
    for (const auto &bl : run.builds)
      min = bl.id == bestE->id + "-min" ? &bl : min;
    // Where it came in the search: its generation for the genetic strategy
    // (a population); else its evaluation, as results.csv numbers it (tpe's
    // generation numbers count proposals, most never built: issue 50 item 4).
    bool genetic = !run.started || run.started->search.strategy == "genetic" || run.started->strategy == "genetic";
    std::string when = genetic ? "generation " + std::to_string(bestE->generation)
                               : "evaluation " + std::to_string(bestE - run.evals.data()) + " of " +
                                     std::to_string(run.evals.size());
    row(best, min ? min->id + " (" + bestE->id + ", " + when + ", minimized)" : bestE->id + " (" + when + ")");
    row("best score", fmt::value(*bestE->score) + " " + bestE->unit);
    const RecordedEval &shown = min ? *min : *bestE;
    // The options the controls render (the summary's "winning options"), not
    // the JSON of results.csv's controls cell (issue 50 item 4).
    row("best controls", renderedOptions(shown));
    if (b && b->ok && b->score && *bestE->score != 0) {
      double ratio = run.direction == "maximize" ? *bestE->score / *b->score
                                                 : *b->score / *bestE->score;
      row("improvement over baseline", fmt::ratio(ratio));
    }
  }
  o << "</table>\n";
  return o.str();
}

// benchmark.cases: each case's figures, the baseline and the best candidate
// side by side (the score is the geometric mean of the ratios).
std::string casesHtml(const RunData &run) {
  const RecordedEval *b = run.baseline(), *best = bestByWinnerOrder(run);
  if (!b || !b->journal || b->journal->cases.empty())
    return "";
  std::ostringstream o;
  o << "<h2>Cases</h2>\n<p>The score is the geometric mean over the cases of the ratio median / baseline median.</p>\n"
       "<table class='summary'>\n<tr><th>case</th><th>baseline median</th><th>runs</th><th>noise</th>"
       "<th>best median</th><th>runs</th><th>noise</th><th>ratio</th><th>p-value</th></tr>\n";
  for (const auto &bc : b->journal->cases) {
    const CaseResult *w = nullptr;
    if (best && best->journal)
      for (const auto &c : best->journal->cases)
        w = c.name == bc.name ? &c : w;
    auto td = [&](const std::string &v) { o << "<td>" << htmlEscape(v) << "</td>"; };
    o << "<tr>";
    td(bc.name);
    td(fmt::value(bc.median));
    td(std::to_string(bc.runs.size()));
    td(fmt::percent(bc.noisePercent, bc.runs.size()));
    td(w ? fmt::value(w->median) : "-");
    td(w ? std::to_string(w->runs.size()) : "-");
    td(w ? fmt::percent(w->noisePercent, w->runs.size()) : "-");
    td(w && w->ratio > 0 ? fmt::ratio(w->ratio) : "-");
    td(w && w->pValue >= 0 && best != b ? fmt::pValue(w->pValue) : "-");
    o << "</tr>\n";
  }
  return o.str() + "</table>\n";
}

// The kernels the benchmark launched (a traced run of each build,
// benchmark.kernel_times), the baseline and the best candidate side by side.
std::string kernelTimesHtml(const RunData &run) {
  const RecordedEval *b = run.baseline(), *best = bestByWinnerOrder(run);
  if (!b || !b->journal || b->journal->kernelTimes.empty())
    return "";
  const KernelTimes &bk = b->journal->kernelTimes;
  // A twin measured nothing of its own: the evaluation it reused did.
  const Evaluation *bestLine = best != b ? measuredLine(run, best) : nullptr;
  const KernelTimes *wk = bestLine ? &bestLine->kernelTimes : nullptr;
  double total = 0;
  for (const auto &k : bk)
    total += k.gpuMs;
  std::ostringstream o;
  o << "<h2>Kernel times</h2>\n<p>GPU time of each kernel in one traced run (CUPTI, "
    << htmlEscape(b->journal->kernelTimesFrom == "measured_runs" ? "the last measured run" : "the first warm-up run")
    << "), launches and share of the baseline's.</p>\n<table class='summary'>\n<tr><th>kernel</th><th>launches</th>"
       "<th>share</th><th>baseline ms</th><th>"
    << htmlEscape(wk ? best->id : std::string("best")) << " ms</th><th>ratio</th></tr>\n";
  auto td = [&](const std::string &v) { o << "<td>" << htmlEscape(v) << "</td>"; };
  for (const auto &k : bk) {
    const KernelTime *w = nullptr;
    if (wk)
      for (const auto &x : *wk)
        w = x.mangled == k.mangled ? &x : w;
    o << "<tr>";
    td(k.demangled);
    td(std::to_string(k.launches));
    td(total > 0 ? fmt::value(100 * k.gpuMs / total) + "%" : "-");
    td(fmt::value(k.gpuMs));
    td(w ? fmt::value(w->gpuMs) : "-");
    td(w && k.gpuMs > 0 ? fmt::ratio(w->gpuMs / k.gpuMs) : "-");
    o << "</tr>\n";
  }
  return o.str() + "</table>\n";
}

// Which controls cause the gain: each group alone and together, against the
// baseline (measured interleaved after the search), and what minimization dropped.
std::string attributionHtml(const RunData &run) {
  if (run.attribution.empty())
    return "";
  std::ostringstream o;
  o << "<h2>Attribution</h2>\n<table class='summary'>\n<tr><th>build</th><th>median</th><th>speedup</th>"
       "<th>p-value</th><th>verdict</th><th>controls</th></tr>\n";
  for (size_t i = 0; i < run.attribution.size(); ++i) {
    const AttributionRow &r = run.attribution[i];
    // The first row is the reference: no comparison. A missing speedup of the
    // others is undefined (a median of 0 to divide by).
    bool compared = i > 0;
    std::string speedup = !compared   ? "-"
                          : r.speedup ? fmt::ratio(*r.speedup)
                                      : std::string(r.median == 0 ? "n/a (winner 0)" : "n/a (baseline 0)");
    o << "<tr><td>" << htmlEscape(r.name) << "</td><td>" << fmt::value(r.median) << "</td><td>" << speedup
      << "</td><td>" << (compared && r.pValue ? htmlEscape(fmt::pValue(*r.pValue)) : "-") << "</td><td>" << (compared ? htmlEscape(r.verdict) : "-")
      << "</td><td>" << htmlEscape(r.controls) << "</td></tr>\n";
  }
  o << "</table>\n";
  for (const auto &s : run.minimization)
    o << "<p>minimization: " << (s.dropped ? "dropped " : "kept ") << htmlEscape(s.removed) << " ("
      << htmlEscape(s.detail) << ")</p>\n";
  return o.str();
}

std::string findingsHtml(const RunData &run) {
  auto findings = diagnose(run);
  std::ostringstream o;
  o << "<h2>Diagnosis</h2>\n";
  if (findings.empty())
    return o.str() + "<p>No pathology found (ciq diagnose).</p>\n";
  o << "<ul>\n";
  for (const auto &f : findings)
    o << "<li><b>" << htmlEscape(f.kind) << "</b>: " << htmlEscape(f.title) << "<br>next: "
      << htmlEscape(f.next) << "</li>\n";
  return o.str() + "</ul>\n";
}

std::string pageHtml(const RunData &run, const std::vector<std::string> &svgs) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>\n"
       "<title>ciq report</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:"
       "960px}table.summary th{text-align:left;padding-right:1em}img.plot{display:block;"
       "margin:1em 0;border:1px solid #ddd}table.kernels{border-collapse:collapse;font-size:90%}"
       "table.kernels th,table.kernels td{border-bottom:1px solid #ddd;padding:2px 6px;text-align:left;"
       "vertical-align:top}td.kname{max-width:22em;overflow-wrap:anywhere}</style>\n</head>\n<body data-plots-loaded='0'>\n"
       "<h1>ciq report</h1>\n"
    << summaryTable(run) << casesHtml(run) << kernelTableHtml(run, run.baseline(), bestByWinnerOrder(run))
    << kernelTimesHtml(run) << attributionHtml(run) << findingsHtml(run) << "<h2>Plots</h2>\n";
  for (const auto &svg : svgs) {
    std::string name = llvm::sys::path::filename(svg).str();
    o << "<img class='plot' id='" << htmlEscape(llvm::sys::path::stem(svg).str()) << "' src='"
      << htmlEscape(name) << "' alt='" << htmlEscape(name) << "'>\n";
  }
  // Lets a headless browser (and the lit test) confirm every plot rendered.
  o << "<script>\nwindow.addEventListener('load', function () {\n"
       "  var imgs = document.querySelectorAll('img.plot'), ok = 0;\n"
       "  imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });\n"
       "  document.body.setAttribute('data-plots-loaded', String(ok));\n"
       "  document.body.setAttribute('data-plots-total', String(imgs.length));\n"
       "});\n</script>\n</body></html>\n";
  return o.str();
}

} // namespace

std::optional<ReportResult> writeReport(const RunData &run, const std::string &outDir,
                                        std::string &error) {
  auto gnuplot = findExecutable("gnuplot");
  if (!gnuplot) {
    error = "gnuplot not found on PATH; install it (Debian: apt-get install gnuplot-nox)";
    return std::nullopt;
  }
  if (auto ec = llvm::sys::fs::create_directories(outDir)) {
    error = outDir + ": cannot create the report directory (" + ec.message() + ")";
    return std::nullopt;
  }
  Plotter p{run, outDir, *gnuplot, {}};
  if (!p.best(error) || !p.generations(error) || !p.scurve(error) || !p.pareto(error))
    return std::nullopt;
  ReportResult r;
  r.htmlPath = join(outDir, "index.html");
  r.svgPaths = p.svgs;
  if (!writeText(r.htmlPath, pageHtml(run, p.svgs), error))
    return std::nullopt;
  return r;
}

} // namespace ciq
