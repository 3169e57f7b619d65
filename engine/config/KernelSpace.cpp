#include "engine/config/KernelSpace.h"

#include "common/KernelDirective.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

namespace ciq {
namespace {

// Register ceilings worth trying: the steps at which an SM's 64K registers
// fit one more warp group, as ptxas allocates them (multiples of 8).
const std::vector<int> kCeilings = {32, 40, 48, 56, 64, 72, 80, 96, 128, 168, 255};
// The most threads an SM holds (sm_70 and later: 2048) bounds the blocks a
// __launch_bounds__ block size can ask for; at most 8 are tried.
constexpr int kThreadsPerSm = 2048, kMostBlocks = 8;

bool wants(const KernelControlsConfig &cfg, const char *directive) {
  return std::find(cfg.directives.begin(), cfg.directives.end(), directive) != cfg.directives.end();
}

Control kernelControl(const SpaceKernel &k, const std::string &name, const char *directive,
                      const std::vector<int> &values, const std::string &help) {
  Control c;
  c.name = name + "." + directive;
  c.render = RenderKind::Kernel;
  c.option = directive;
  c.kernelKey = k.key;
  c.kernelLabel = name.substr(std::string("kernel.").size());
  c.domain = DomainKind::Choice;
  for (int v : values)
    c.values.push_back(std::to_string(v));
  c.help = help;
  c.origin = "per-kernel controls of " + (k.demangled.empty() ? k.mangled : k.demangled);
  c.spaceName = "kernel-controls";
  return c;
}

void addControls(const KernelControlsConfig &cfg, const SpaceKernel &k, const std::string &name,
                 std::vector<Control> &out) {
  if (wants(cfg, kDirectiveMaxnreg)) {
    // A ceiling at or above what the kernel uses changes nothing, unless
    // ptxas capped it (it spills): then a higher one matters once the
    // occupancy request is relaxed too.
    std::vector<int> v;
    for (int c : kCeilings)
      if (c < k.registers || (k.spillBytes > 0 && c > k.registers))
        v.push_back(c);
    if (!v.empty())
      out.push_back(kernelControl(k, name, kDirectiveMaxnreg, v, "register ceiling (.maxnreg), registers"));
  }
  if (wants(cfg, kDirectiveMinBlocks) && k.ptxKnown && k.maxThreads > 0) {
    std::vector<int> v;
    for (int b = 1; b <= std::min(kMostBlocks, kThreadsPerSm / k.maxThreads); ++b)
      if (b != k.minBlocks && !(k.minBlocks == 0 && b == 1))
        v.push_back(b);
    if (!v.empty())
      out.push_back(kernelControl(k, name, kDirectiveMinBlocks, v,
                                  "blocks per SM the __launch_bounds__ ask for (.minnctapersm)"));
  }
  if (wants(cfg, kDirectiveSmemSpilling) && k.ptxKnown && k.maxThreads > 0 && k.spillBytes > 0)
    out.push_back(kernelControl(k, name, kDirectiveSmemSpilling, {1}, "spill to shared memory (enable_smem_spilling)"));
}

} // namespace

std::string kernelLabel(const std::string &demangled, const std::string &mangled) {
  if (demangled.empty())
    return mangled;
  // The parameter list: the last '(' at template depth 0.
  int depth = 0;
  size_t paren = std::string::npos;
  for (size_t i = 0; i < demangled.size(); ++i) {
    char c = demangled[i];
    if (c == '<')
      ++depth;
    else if (c == '>')
      --depth;
    else if (c == '(' && depth == 0 && demangled.compare(i, 20, "(anonymous namespace") != 0) {
      paren = i;
      break;
    }
  }
  std::string head = demangled.substr(0, paren);
  // A return type ("void tile<64>"): the part after the last space at depth 0.
  depth = 0;
  size_t cut = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    char c = head[i];
    if (c == '<' || c == '(')
      ++depth;
    else if (c == '>' || c == ')')
      --depth;
    else if (c == ' ' && depth == 0)
      cut = i + 1;
  }
  head = head.substr(cut);
  // Namespaces and classes: the last component outside template arguments.
  depth = 0;
  size_t last = 0;
  for (size_t i = 0; i + 1 < head.size(); ++i) {
    char c = head[i];
    if (c == '<' || c == '(')
      ++depth;
    else if (c == '>' || c == ')')
      --depth;
    else if (c == ':' && head[i + 1] == ':' && depth == 0)
      last = i + 2;
  }
  std::string label = head.substr(last);
  std::string clean;
  for (char c : label)
    clean += c == ' ' ? '_' : c;
  return clean.empty() ? mangled : clean;
}

std::vector<SpaceKernel> spaceKernels(const std::vector<KernelStats> &baseline) {
  std::vector<SpaceKernel> out;
  std::map<std::string, size_t> at;
  for (const auto &k : baseline) {
    if (!k.entry)
      continue;
    std::string key = kernelKey(k.name);
    auto [it, fresh] = at.insert({key, out.size()});
    if (fresh) {
      SpaceKernel s;
      s.key = key;
      s.mangled = k.name;
      s.demangled = k.demangled;
      out.push_back(s);
    }
    SpaceKernel &s = out[it->second];
    s.registers = std::max(s.registers, k.registers);
    s.spillBytes = std::max(s.spillBytes, k.spillStores + k.spillLoads);
    if (k.ptxKnown) {
      s.ptxKnown = true;
      s.maxThreads = k.ptxMaxThreads;
      s.minBlocks = k.ptxMinBlocks;
    }
  }
  return out;
}

// "ciq.yaml:12: kernel_controls.kernels": the origin names the section.
static std::string kernelsKey(const std::string &origin) {
  const std::string section = "kernel_controls";
  std::string where = origin;
  if (where.size() >= section.size() && where.compare(where.size() - section.size(), section.size(), section) == 0)
    where.erase(where.size() - section.size());
  else if (!where.empty())
    where += ": ";
  return where + "kernel_controls.kernels";
}

KernelControls kernelControlsFor(const KernelControlsConfig &cfg, const std::vector<SpaceKernel> &kernels,
                                 const std::vector<std::string> &order) {
  KernelControls r;
  std::optional<std::regex> filter;
  if (!cfg.kernels.empty()) {
    try {
      filter.emplace(cfg.kernels, std::regex::ECMAScript);
    } catch (const std::regex_error &e) {
      r.error = kernelsKey(cfg.origin) + ": '" + cfg.kernels + "' is not a regular expression (" +
                e.what() + "); write an ECMAScript regex such as 'sgemm|reduce'";
      return r;
    }
  }
  std::vector<const SpaceKernel *> chosen;
  for (const auto &k : kernels)
    if (!filter || std::regex_search(k.mangled, *filter) || std::regex_search(k.demangled, *filter))
      chosen.push_back(&k);
  if (filter && chosen.empty()) {
    std::string names;
    for (size_t i = 0; i < kernels.size() && i < 4; ++i)
      names += (i ? ", " : "") + kernelLabel(kernels[i].demangled, kernels[i].mangled);
    r.error = kernelsKey(cfg.origin) + ": '" + cfg.kernels + "' matches none of the " +
              std::to_string(kernels.size()) + " kernels the baseline compiled (" + (names.empty() ? "none" : names) +
              (kernels.size() > 4 ? ", ..." : "") + "); change the pattern, or remove it to tune every kernel";
    return r;
  }
  if (!order.empty()) {
    std::map<std::string, size_t> rank;
    for (size_t i = 0; i < order.size(); ++i)
      rank.insert({order[i], i});
    std::vector<const SpaceKernel *> launched;
    for (const auto *k : chosen)
      if (rank.count(k->key))
        launched.push_back(k);
      else
        r.notes.push_back("per-kernel controls: " + kernelLabel(k->demangled, k->mangled) +
                          " keeps the default compile: the benchmark does not launch it");
    std::stable_sort(launched.begin(), launched.end(),
                     [&](const SpaceKernel *a, const SpaceKernel *b) { return rank[a->key] < rank[b->key]; });
    chosen = launched;
  }
  if ((int)chosen.size() > cfg.maxKernels) {
    r.notes.push_back("per-kernel controls: the first " + std::to_string(cfg.maxKernels) + " of " +
                      std::to_string(chosen.size()) + " kernels (kernel_controls.max_kernels)");
    chosen.resize(cfg.maxKernels);
  }
  std::map<std::string, int> seen;
  for (const auto *k : chosen) {
    std::string label = kernelLabel(k->demangled, k->mangled);
    int n = ++seen[label];
    addControls(cfg, *k, "kernel." + label + (n > 1 ? "#" + std::to_string(n) : ""), r.controls);
  }
  return r;
}

} // namespace ciq
