#include "engine/analysis/ReportKernels.h"
#include "engine/analysis/Occupancy.h"
#include "common/KernelDirective.h"
#include "common/NumberFormat.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace ciq {

namespace {


const KernelTime *timeOf(const Evaluation *j, const std::string &mangled) {
  if (j)
    for (const auto &k : j->kernelTimes)
      if (k.mangled == mangled)
        return &k;
  return nullptr;
}

// Theoretical occupancy at the block size the benchmark launched with (its
// traced launch), else the __launch_bounds__ block size, else 256 threads.
std::string occupancy(const KernelStats &k, const KernelTime *t) {
  auto limits = archLimits(k.arch);
  if (!limits || !k.usageKnown || !k.entry)
    return "-";
  OccupancyInput in;
  in.registersPerThread = k.registers;
  in.staticSharedBytes = k.sharedBytes;
  in.barriers = k.barriers;
  if (t && t->block[0] > 0) {
    in.threadsPerBlock = t->block[0] * std::max(1, t->block[1]) * std::max(1, t->block[2]);
    in.dynamicSharedBytes = t->dynamicSharedBytes;
  } else if (k.ptxKnown && k.ptxMaxThreads > 0) {
    in.threadsPerBlock = k.ptxMaxThreads;
  }
  std::string error;
  auto r = computeOccupancy(*limits, in, error);
  if (!r)
    return "-";
  return fmt::value(std::round(r->occupancyPercent * 10) / 10) + "%";
}

// "a -> b", or "a" when both builds agree.
std::string pair(const std::string &a, const std::string &b) {
  if (a == b)
    return a;
  return a + " &rarr; " + b;
}

struct Row {
  std::string name, arch, mangled;
  bool entry = true;
  const KernelStats *base = nullptr, *win = nullptr;
};

} // namespace

const Evaluation *measuredLine(const RunData &run, const RecordedEval *e) {
  if (!e || !e->journal)
    return nullptr;
  if (!e->duplicateOf.empty() && e->journal->kernels.empty())
    if (const RecordedEval *orig = run.find(e->duplicateOf); orig && orig != e && orig->journal)
      return &*orig->journal;
  return &*e->journal;
}

const RecordedEval *shownWinner(const RunData &run, const RecordedEval *best) {
  if (!best)
    return nullptr;
  for (const auto &bl : run.builds)
    if (bl.id == best->id + "-min")
      return &bl;
  return best;
}

std::string renderedOptions(const RecordedEval &e) {
  if (e.journal)
    return e.journal->rendered.summary();
  if (!e.rendered.empty())
    return e.rendered;
  auto j = nlohmann::json::parse(e.controls, nullptr, false);
  if (!j.is_object() || j.empty())
    return "(default compile)";
  std::string s;
  for (const auto &[k, v] : j.items())
    s += (s.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

std::string kernelTableHtml(const RunData &run, const RecordedEval *base, const RecordedEval *best) {
  const Evaluation *b = measuredLine(run, base);
  const RecordedEval *shown = best && best != base ? shownWinner(run, best) : nullptr;
  const Evaluation *w = shown ? measuredLine(run, shown) : nullptr;
  // A minimized build is not traced: its kernel times are those of the
  // evaluation it came from where the build did not borrow them.
  const Evaluation *wTimes = w && !w->kernelTimes.empty() ? w : measuredLine(run, best != base ? best : nullptr);
  if (w && w->kernels.empty() && shown != best)
    w = measuredLine(run, best);
  if ((!b || b->kernels.empty()) && (!w || w->kernels.empty()))
    return "";
  std::map<std::pair<std::string, std::string>, Row> rows;
  auto add = [&](const Evaluation *j, bool isBase) {
    if (!j)
      return;
    for (const auto &k : j->kernels) {
      Row &r = rows[{k.demangled.empty() ? k.name : k.demangled, k.arch}];
      r.name = k.demangled.empty() ? k.name : k.demangled;
      r.arch = k.arch;
      r.mangled = k.name;
      r.entry = k.entry;
      (isBase ? r.base : r.win) = &k;
    }
  };
  add(b, true);
  add(w, false);
  // The GPU time column only where a run was traced (a runtime objective).
  bool traced = (b && !b->kernelTimes.empty()) || (wTimes && !wTimes->kernelTimes.empty());
  std::ostringstream o;
  o << "<h2>Kernels</h2>\n<p>Each kernel as ptxas compiled it for the baseline (default compile) &rarr; "
    << htmlEscape(shown ? shown->id : std::string("the winner (none)"))
    << ". Occupancy is theoretical (CUDA's occupancy calculator) at the launch's block size where the "
       "benchmark was traced, else the <code>__launch_bounds__</code> block size, else 256 threads.</p>\n"
       "<table class='kernels'>\n<tr><th>kernel</th><th>arch</th><th>registers</th><th>spill bytes</th>"
       "<th>stack bytes</th><th>occupancy</th>"
    << (traced ? "<th>GPU ms (traced run)</th>" : "") << "<th>winner's directives</th></tr>\n";
  auto num = [](const KernelStats *k, long v, bool known) {
    return !k ? std::string("-") : known ? std::to_string(v) : std::string("?");
  };
  for (const auto &[key, r] : rows) {
    const KernelStats *kb = r.base, *kw = r.win;
    std::string regs = pair(num(kb, kb ? kb->registers : 0, kb && kb->usageKnown && kb->entry),
                            num(kw, kw ? kw->registers : 0, kw && kw->usageKnown && kw->entry));
    std::string spills = pair(num(kb, kb ? kb->spillStores + kb->spillLoads : 0, kb && kb->frameKnown),
                              num(kw, kw ? kw->spillStores + kw->spillLoads : 0, kw && kw->frameKnown));
    std::string stack = pair(num(kb, kb ? kb->stackFrame : 0, kb && kb->frameKnown),
                             num(kw, kw ? kw->stackFrame : 0, kw && kw->frameKnown));
    const KernelTime *tb = timeOf(b, r.mangled), *tw = timeOf(wTimes, r.mangled);
    std::string occ = pair(kb ? occupancy(*kb, tb) : "-", kw ? occupancy(*kw, tw ? tw : tb) : "-");
    std::string ms = !tb && !tw ? "-" : pair(tb ? fmt::value(tb->gpuMs) : "-", tw ? fmt::value(tw->gpuMs) : "-");
    std::string directives;
    if (shown && shown->journal)
      for (const auto &d : shown->journal->rendered.kernels)
        if (d.kernel == kernelKey(r.mangled))
          directives += (directives.empty() ? "" : " ") + directivePtx(d);
    o << "<tr><td class='kname' title='" << htmlEscape(r.name) << "'>" << htmlEscape(r.name)
      << (r.entry ? "" : " <i>(device function)</i>") << "</td><td>" << htmlEscape(r.arch) << "</td><td>" << regs
      << "</td><td>" << spills << "</td><td>" << stack << "</td><td>" << occ << "</td>"
      << (traced ? "<td>" + ms + "</td>" : "") << "<td><code>"
      << htmlEscape(directives.empty() ? "-" : directives) << "</code></td></tr>\n";
  }
  return o.str() + "</table>\n";
}

std::string htmlEscape(const std::string &s) {
  std::string out;
  for (char c : s)
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  return out;
}

} // namespace ciq
