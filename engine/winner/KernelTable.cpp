#include "engine/winner/KernelTable.h"

#include <algorithm>

namespace ciq {

const KernelTime *findKernelTime(const KernelTimes &ks, const std::string &mangled) {
  auto it = std::find_if(ks.begin(), ks.end(), [&](const KernelTime &k) { return k.mangled == mangled; });
  return it == ks.end() ? nullptr : &*it;
}

static std::string ms(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Whether it ran faster or slower, in words (issue 50 item 5: a kernel
// listed as worse for its spills while its GPU time fell said nothing of it).
// Per launch when both ran it as often; else both the total and a launch.
static std::string speedWords(const KernelTime &b, const KernelTime &w) {
  auto word = [](double from, double to) {
    return to < from / 1.01 ? "faster" : to > from * 1.01 ? "slower" : "no slower";
  };
  if (!b.launches || !w.launches)
    return "";
  if (b.launches == w.launches)
    return std::string(", ran ") + word(b.gpuMs, w.gpuMs);
  return " over " + std::to_string(b.launches) + " -> " + std::to_string(w.launches) + " launches: " +
         word(b.gpuMs, w.gpuMs) + " in all, " + word(b.gpuMs / b.launches, w.gpuMs / w.launches) + " a launch";
}

std::string launchNote(const Evaluation &base, const Evaluation &win, const std::string &mangled) {
  if (base.kernelTimes.empty())
    return "";
  const KernelTime *b = findKernelTime(base.kernelTimes, mangled), *w = findKernelTime(win.kernelTimes, mangled);
  if (!b && !w)
    return " [not launched by the benchmark]";
  if (b && !w && win.kernelTimes.empty())
    return " [launched: " + ms(b->gpuMs) + " ms GPU time; " + win.candidateId + " was not traced]";
  return " [launched: " + (b ? ms(b->gpuMs) : std::string("-")) + " -> " + (w ? ms(w->gpuMs) : std::string("-")) +
         " ms GPU time" + (b && w ? speedWords(*b, *w) : "") + "]";
}

bool launchedNoSlower(const Evaluation &base, const Evaluation &win, const std::string &mangled) {
  const KernelTime *b = findKernelTime(base.kernelTimes, mangled), *w = findKernelTime(win.kernelTimes, mangled);
  if (!b || !w || !b->launches || !w->launches)
    return false;
  return w->gpuMs / (double)w->launches <= 1.01 * b->gpuMs / (double)b->launches;
}

void borrowKernelTimes(Evaluation &built, const std::vector<Evaluation> &evals) {
  if (!built.kernelTimes.empty() || built.objectsSha256.empty())
    return;
  for (const Evaluation &e : evals)
    if (e.ok && !e.kernelTimes.empty() && e.objectsSha256 == built.objectsSha256 &&
        e.deviceCodeSha256 == built.deviceCodeSha256) {
      built.kernelTimes = e.kernelTimes;
      built.kernelTimesFrom = e.kernelTimesFrom + " of " + e.candidateId + " (the same objects)";
      return;
    }
}

void printKernelTimes(const Evaluation &base, const Evaluation *win, FILE *out) {
  if (base.kernelTimes.empty() && (!win || win->kernelTimes.empty()))
    return;
  // The baseline's kernels first (most GPU time first), then any only the winner launched.
  KernelTimes rows = base.kernelTimes;
  if (win)
    for (const KernelTime &k : win->kernelTimes)
      if (!findKernelTime(rows, k.mangled))
        rows.push_back(k);
  double total = 0;
  for (const KernelTime &k : base.kernelTimes)
    total += k.gpuMs;
  fprintf(out, "kernel times (GPU ms of one traced run; launches of the baseline):\n");
  fprintf(out, "  %-48s %9s %7s | %12s | %12s\n", "kernel", "launches", "share", "baseline ms", "winner ms");
  for (const KernelTime &k : rows) {
    const KernelTime *b = findKernelTime(base.kernelTimes, k.mangled);
    const KernelTime *w = win ? findKernelTime(win->kernelTimes, k.mangled) : nullptr;
    std::string name = k.demangled.size() > 48 ? k.demangled.substr(0, 45) + "..." : k.demangled;
    char share[16] = "-";
    if (b && total > 0)
      snprintf(share, sizeof share, "%.1f%%", 100 * b->gpuMs / total);
    fprintf(out, "  %-48s %9s %7s | %12s | %12s\n", name.c_str(), b ? std::to_string(b->launches).c_str() : "-", share,
            b ? ms(b->gpuMs).c_str() : "-", w ? ms(w->gpuMs).c_str() : "-");
  }
}

} // namespace ciq
