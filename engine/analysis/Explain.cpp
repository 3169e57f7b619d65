#include "engine/analysis/Explain.h"

#include "engine/measure/CsvTable.h"
#include "engine/analysis/Occupancy.h"
#include "common/Protocol.h"
#include "common/Subprocess.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Path.h>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace ciq {

namespace {

std::optional<std::vector<KernelStats>> kernelsOf(const RecordedEval &e) {
  if (!e.journal)
    return std::nullopt;
  return e.journal->kernels;
}

// Occupancy as "62.5% (registers)" or the reason it cannot be computed.
std::string occupancyText(const KernelStats &k, const ExplainOptions &o) {
  std::string arch = o.arch.empty() ? k.arch : o.arch;
  auto limits = archLimits(arch);
  if (!limits)
    return "unknown arch '" + arch + "'";
  OccupancyInput in;
  in.registersPerThread = k.registers;
  in.staticSharedBytes = k.sharedBytes;
  in.dynamicSharedBytes = o.dynamicSharedBytes;
  in.threadsPerBlock = o.threadsPerBlock;
  in.barriers = k.barriers;
  std::string error;
  auto r = computeOccupancy(*limits, in, error);
  if (!r)
    return error;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.1f%%", r->occupancyPercent) << " (" << r->activeWarpsPerSM << "/"
     << r->maxWarpsPerSM << " warps, " << r->limitedBy << ")";
  return os.str();
}

// One table row; `width`: the columns of a and b (a table passes the widest
// cell it holds, so an occupancy with two limiters does not push "change"
// out of line).
void row(llvm::raw_ostream &os, const std::string &what, const std::string &a,
         const std::string &b, const std::string &change, int width = 34) {
  os << llvm::format("  %-26s %-*s %-*s %s\n", what.c_str(), width, a.c_str(), width, b.c_str(),
                     change.c_str());
}
std::string delta(long a, long b) {
  if (a == b)
    return "";
  return (b > a ? "+" : "") + std::to_string(b - a);
}

// Kernels keyed by mangled name and architecture.
std::map<std::string, KernelStats> keyed(const std::vector<KernelStats> &ks) {
  std::map<std::string, KernelStats> m;
  for (const auto &k : ks)
    m[k.name + " " + k.arch] = k;
  return m;
}

long deviceCodeBytes(const RecordedEval &e, std::map<std::string, long> &perObject) {
  long total = 0;
  if (!e.journal)
    return -1;
  for (const auto &o : e.journal->objects) {
    perObject[o.output] = o.deviceCodeBytes;
    total += o.deviceCodeBytes;
  }
  return total;
}

} // namespace

// Each launched kernel's GPU time in the two builds' traced runs (the
// journal's kernel_times), or why a build has none.
static void printKernelTimesOf(const RecordedEval &a, const RecordedEval &c, const std::string &la, const std::string &lc,
                      llvm::raw_ostream &os) {
  const Evaluation *ja = a.journal ? &*a.journal : nullptr, *jc = c.journal ? &*c.journal : nullptr;
  if ((!ja || ja->kernelTimes.empty()) && (!jc || jc->kernelTimes.empty())) {
    for (const Evaluation *j : {ja, jc})
      if (j && !j->kernelTimesWhy.empty()) {
        os << "\nkernel times: none for " << j->candidateId << ": " << j->kernelTimesWhy << "\n";
        return;
      }
    return;
  }
  os << "\nkernel times (GPU ms of one traced run, CUPTI)\n";
  row(os, "", la, lc, "ratio", 34);
  std::vector<std::string> order;
  for (const Evaluation *j : {ja, jc})
    if (j)
      for (const auto &k : j->kernelTimes)
        if (std::find(order.begin(), order.end(), k.mangled) == order.end())
          order.push_back(k.mangled);
  auto find = [](const Evaluation *j, const std::string &m) -> const KernelTime * {
    if (j)
      for (const auto &k : j->kernelTimes)
        if (k.mangled == m)
          return &k;
    return nullptr;
  };
  for (const auto &m : order) {
    const KernelTime *ka = find(ja, m), *kc = find(jc, m);
    const KernelTime &any = ka ? *ka : *kc;
    std::string name = any.demangled.size() > 26 ? any.demangled.substr(0, 23) + "..." : any.demangled;
    auto cell = [](const KernelTime *k) {
      return k ? llvm::formatv("{0:g} ({1} launches)", k->gpuMs, k->launches).str() : std::string("not launched");
    };
    row(os, name, cell(ka), cell(kc),
        ka && kc && ka->gpuMs > 0 ? llvm::formatv("{0:f3}x", kc->gpuMs / ka->gpuMs).str() : "", 34);
  }
}

bool explainCandidates(const RecordedEval &cand, const RecordedEval &against,
                       const ExplainOptions &opts, llvm::raw_ostream &os, std::string &error) {
  auto kc = kernelsOf(cand), ka = kernelsOf(against);
  for (auto [k, e] : {std::pair{&kc, &cand}, std::pair{&ka, &against}})
    if (!*k) {
      error = "the journal has no kernel statistics (`kernels`) for " + e->id +
              "; explain needs the run directory's journal.jsonl of a ciq tune run";
      return false;
    }
  std::string la = against.id + (against.baseline ? " (baseline)" : ""), lc = cand.id;
  os << "explain " << lc << " against " << la << "; occupancy for " << opts.threadsPerBlock
     << " threads per block, " << opts.dynamicSharedBytes << " bytes dynamic shared memory"
     << (opts.arch.empty() ? "" : ", arch " + opts.arch) << "\n";
  if (!cand.rendered.empty())
    os << "controls of " << lc << ": " << cand.rendered << "\n";
  if (!against.rendered.empty())
    os << "controls of " << la << ": " << against.rendered << "\n";
  auto ma = keyed(*ka), mc = keyed(*kc);
  std::set<std::string> names;
  for (const auto &[n, k] : ma) names.insert(n);
  for (const auto &[n, k] : mc) names.insert(n);
  for (const auto &n : names) {
    const KernelStats *a = ma.count(n) ? &ma[n] : nullptr, *c = mc.count(n) ? &mc[n] : nullptr;
    const KernelStats &any = a ? *a : *c;
    os << "\nkernel " << (any.demangled.empty() ? any.name : any.demangled) << " [" << any.arch
       << "]\n";
    std::string occA = a ? occupancyText(*a, opts) : "-", occC = c ? occupancyText(*c, opts) : "-";
    int width = (int)std::max({size_t(34), la.size() + 1, lc.size() + 1, occA.size() + 1, occC.size() + 1});
    row(os, "", la, lc, "change", width);
    auto line = [&](const char *what, auto get) {
      std::string sa = a ? std::to_string(get(*a)) : "-", sc = c ? std::to_string(get(*c)) : "-";
      row(os, what, sa, sc, a && c ? delta(long(get(*a)), long(get(*c))) : "", width);
    };
    line("registers", [](const KernelStats &k) { return k.registers; });
    line("spill stores (bytes)", [](const KernelStats &k) { return k.spillStores; });
    line("spill loads (bytes)", [](const KernelStats &k) { return k.spillLoads; });
    line("stack frame (bytes)", [](const KernelStats &k) { return k.stackFrame; });
    line("shared memory (bytes)", [](const KernelStats &k) { return k.sharedBytes; });
    line("barriers", [](const KernelStats &k) { return k.barriers; });
    row(os, "theoretical occupancy", occA, occC, "", width);
    // __launch_bounds__/__maxnreg__ win over -maxrregcount: say so, or the
    // unchanged registers above read as a control that did nothing.
    for (const KernelStats *k : {a, c})
      if (k && !k->capOverride.empty())
        os << "  " << (k == a ? la : lc) << ": -maxrregcount ignored, ptxas kept the "
           << k->capOverride << "\n";
  }
  std::map<std::string, long> pa, pc;
  long ta = deviceCodeBytes(against, pa), tc = deviceCodeBytes(cand, pc);
  if (ta >= 0 || tc >= 0) {
    os << "\ndevice code (.nv_fatbin bytes)\n";
    for (const auto &[obj, bytes] : pa)
      row(os, llvm::sys::path::filename(obj).str(), std::to_string(bytes),
          pc.count(obj) ? std::to_string(pc[obj]) : "-",
          pc.count(obj) ? delta(bytes, pc[obj]) : "");
    row(os, "total", std::to_string(ta), std::to_string(tc), delta(ta, tc));
  }
  printKernelTimesOf(against, cand, la, lc, os);
  if (cand.score && against.score)
    os << "\nscore: " << llvm::format("%g", *against.score) << " -> " << llvm::format("%g", *cand.score) << " " << cand.unit << "\n";
  return true;
}

namespace {

// The metrics ciq asks ncu for, with the names it prints them under.
struct NcuMetric {
  const char *name, *label;
};
const NcuMetric kNcuMetrics[] = {
    {"gpu__time_duration.sum", "duration"},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput (% of peak)"},
    {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory throughput (% of peak)"},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput (% of peak)"},
    {"sm__maximum_warps_per_active_cycle_pct", "theoretical occupancy (%)"},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy (%)"},
};
const char kStallPrefix[] = "smsp__average_warps_issue_stalled_";
const char kStallSuffix[] = "_per_issue_active.ratio";

// "stall: long_scoreboard" for a stall-reason metric, the label of a fixed
// one, or "" for anything else ncu adds to its raw page (device attributes).
std::string ncuLabel(llvm::StringRef metric) {
  for (const auto &m : kNcuMetrics)
    if (metric == m.name)
      return m.label;
  if (metric.consume_front(kStallPrefix) && metric.consume_back(kStallSuffix))
    return "stall: " + metric.str() + " (per issue)";
  return "";
}

// The number of "1,024.5 usecond" (ncu prints thousands separators).
std::optional<double> ncuNumber(std::string v) {
  v = v.substr(0, v.find(' '));
  v.erase(std::remove(v.begin(), v.end(), ','), v.end());
  char *end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size())
    return std::nullopt;
  return d;
}

// "+12.5%" (relative change), "" when equal or not numeric.
std::string ncuChange(const std::string &a, const std::string &b) {
  auto x = ncuNumber(a), y = ncuNumber(b);
  if (!x || !y || *x == *y)
    return "";
  if (*x == 0)
    return "changed";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%+.1f%%", (*y - *x) / *x * 100.0);
  return os.str();
}

} // namespace

std::vector<std::string> ncuArgv(const std::string &ncu, const std::vector<std::string> &command) {
  std::string metrics;
  for (const auto &m : kNcuMetrics)
    metrics += std::string(m.name) + ",";
  metrics += std::string("regex:") + kStallPrefix + ".*" + "_per_issue_active\\.ratio";
  std::vector<std::string> argv = {ncu, "--csv", "--page", "raw",
                                   // ncu locks the clocks to base by default; ciq never changes GPU state.
                                   "--clock-control", "none",
                                   // first launch of every kernel: enough to compare, and fast
                                   "--kernel-id", ":::1", "--metrics", metrics};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::optional<std::vector<NcuKernel>> parseNcuCsv(const std::string &out, std::string &error) {
  // Raw page, CSV: a header of metric names, a row of units, one row per
  // launch; the application's own output comes before it.
  size_t start = out.find("\"ID\"");
  if (start == std::string::npos) {
    error = "ncu printed no kernel metrics (did the benchmark launch a kernel?)";
    return std::nullopt;
  }
  auto table = parseCsv(out.substr(start), error);
  if (!table)
    return std::nullopt;
  if (table->rows.empty()) {
    error = "ncu printed a metrics header but no kernel";
    return std::nullopt;
  }
  std::vector<NcuKernel> kernels;
  for (size_t i = 1; i < table->rows.size(); ++i) { // row 0: units
    NcuKernel k;
    k.name = table->cell(i, "Kernel Name");
    for (size_t c = 0; c < table->header.size() && c < table->rows[i].size(); ++c) {
      std::string label = ncuLabel(table->header[c]);
      if (label.empty())
        continue;
      std::string unit = c < table->rows[0].size() ? table->rows[0][c] : "";
      k.metrics[label] = table->rows[i][c] + (unit.empty() ? "" : " " + unit);
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

std::optional<std::vector<NcuKernel>> runNcu(const std::string &ncu,
                                             const std::vector<std::string> &command,
                                             const std::string &cwd, std::string &error) {
  SubprocessOptions opts;
  opts.cwd = cwd;
  opts.timeoutSeconds = 600;
  auto r = runSubprocess(ncuArgv(ncu, command), opts);
  if (r.spawnFailed || r.timedOut || r.exitCode != 0) {
    error = "ncu failed on '" + shellJoin(command) + "' (" +
            (r.timedOut ? std::string("timed out after 600 s")
                        : "exit " + std::to_string(r.exitCode)) +
            "): " + r.err.substr(0, 300) +
            "; profiling needs a GPU and permission to read its counters";
    return std::nullopt;
  }
  return parseNcuCsv(r.out, error);
}

void printNcuComparison(const std::vector<NcuKernel> &a, const std::vector<NcuKernel> &b,
                        const std::string &labelA, const std::string &labelB,
                        llvm::raw_ostream &os) {
  os << "\nNsight Compute (first launch of each kernel; clocks as they are, not locked)\n";
  std::map<std::string, const NcuKernel *> ma, mb;
  for (const auto &k : a) ma.emplace(k.name, &k);
  for (const auto &k : b) mb.emplace(k.name, &k);
  for (const auto &[name, ka] : ma) {
    os << "kernel " << name << "\n";
    row(os, "metric", labelA, labelB, "change");
    auto it = mb.find(name);
    // The fixed metrics first, in their order; then the stall reasons that moved.
    std::vector<std::string> order;
    for (const auto &m : kNcuMetrics)
      order.push_back(m.label);
    for (const auto &[label, v] : ka->metrics)
      if (llvm::StringRef(label).startswith("stall: "))
        order.push_back(label);
    for (const auto &label : order) {
      auto va = ka->metrics.find(label);
      if (va == ka->metrics.end())
        continue;
      std::string vb = it != mb.end() && it->second->metrics.count(label)
                           ? it->second->metrics.at(label) : "-";
      std::string change = ncuChange(va->second, vb);
      if (llvm::StringRef(label).startswith("stall: ") && change.empty())
        continue;
      row(os, label, va->second, vb, change);
    }
    if (it == mb.end())
      os << "  (" << labelB << " did not launch this kernel)\n";
  }
}

} // namespace ciq
