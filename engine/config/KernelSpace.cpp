#include "engine/config/KernelSpace.h"
#include "common/KernelDirective.h"

#include <llvm/ADT/StringExtras.h>

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

// What a compile objective lets a directive do: a register ceiling can only
// add spills, a relaxed occupancy request can only add registers.
enum class Aim { Any, FewerRegisters, FewerSpills };

Aim aimOf(const std::string &objective) {
  if (objective == "registers")
    return Aim::FewerRegisters;
  if (objective == "spill_bytes" || objective == "spill_stores" || objective == "spill_loads" ||
      objective == "stack_frame")
    return Aim::FewerSpills;
  return Aim::Any;
}

void addMaxnreg(const KernelControlsConfig &cfg, const SpaceKernel &k, const std::string &name, Aim aim,
                std::vector<Control> &out, std::vector<std::string> &notes) {
  // A ceiling at or above what the kernel uses changes nothing, unless
  // ptxas capped it (it spills): then a higher one matters once the
  // occupancy request is relaxed too. Never above the kernel's own
  // __maxnreg__: its author set that bound.
  std::vector<int> v;
  bool aboveSource = false;
  for (int c : kCeilings) {
    bool lower = c < k.registers && aim != Aim::FewerSpills;
    bool higher = k.spillBytes > 0 && c > k.registers && aim != Aim::FewerRegisters;
    if (!lower && !higher)
      continue;
    if (k.sourceMaxnreg > 0 && c > k.sourceMaxnreg)
      aboveSource = true;
    else
      v.push_back(c);
  }
  if (aboveSource)
    notes.push_back("per-kernel controls: " + name.substr(7) + ": no register ceiling above its own .maxnreg " +
                    std::to_string(k.sourceMaxnreg) + " (__maxnreg__ in its source); raise that in the source to "
                    "let ciq try more");
  if (!v.empty())
    out.push_back(kernelControl(k, name, kDirectiveMaxnreg, v, "register ceiling (.maxnreg), registers"));
}

void addMinBlocks(const SpaceKernel &k, const std::string &name, Aim aim, std::vector<Control> &out) {
  if (!k.ptxKnown || k.maxThreads <= 0)
    return;
  int current = std::max(1, k.minBlocks);
  std::vector<int> v;
  for (int b = 1; b <= std::min(kMostBlocks, kThreadsPerSm / k.maxThreads); ++b) {
    if (b == k.minBlocks || (k.minBlocks == 0 && b == 1))
      continue;
    // More blocks per SM cap the registers lower; fewer relax the cap.
    if ((aim == Aim::FewerRegisters && b < current) || (aim == Aim::FewerSpills && b > current))
      continue;
    v.push_back(b);
  }
  if (!v.empty())
    out.push_back(kernelControl(k, name, kDirectiveMinBlocks, v,
                                "blocks per SM the __launch_bounds__ ask for (.minnctapersm)"));
}

void addSmemSpilling(const SpaceKernel &k, const std::string &name, Aim aim, std::vector<Control> &out,
                     std::vector<std::string> &notes) {
  if (!k.ptxKnown || k.maxThreads <= 0 || k.spillBytes <= 0 || aim == Aim::FewerRegisters)
    return;
  // ptxas refuses enable_smem_spilling in these: a trial would fail, and
  // the trials riding in the same binary with it.
  const char *why = k.dynamicShared ? "it uses dynamic shared memory" : k.relocatable ? "it is compiled -rdc"
                    : k.deviceDebug ? "it is compiled -G" : nullptr;
  if (why) {
    notes.push_back("per-kernel controls: " + name.substr(7) + ": no shared-memory spilling: " + why +
                    ", where ptxas refuses enable_smem_spilling");
    return;
  }
  out.push_back(kernelControl(k, name, kDirectiveSmemSpilling, {1}, "spill to shared memory (enable_smem_spilling)"));
}

void addControls(const KernelControlsConfig &cfg, const SpaceKernel &k, const std::string &name,
                 std::vector<Control> &out, std::vector<std::string> &notes) {
  Aim aim = aimOf(cfg.objective);
  if (k.setmaxnreg && (wants(cfg, kDirectiveMaxnreg) || wants(cfg, kDirectiveMinBlocks)))
    notes.push_back("per-kernel controls: " + name.substr(7) + ": no register ceiling or blocks-per-SM request: "
                    "it reconfigures its registers with setmaxnreg (warp specialization), where a .maxnreg or "
                    ".minnctapersm can leave setmaxnreg.inc waiting for registers that never free up (a hang)");
  if (wants(cfg, kDirectiveMaxnreg) && !k.setmaxnreg)
    addMaxnreg(cfg, k, name, aim, out, notes);
  if (wants(cfg, kDirectiveMinBlocks) && !k.setmaxnreg)
    addMinBlocks(k, name, aim, out);
  if (wants(cfg, kDirectiveSmemSpilling))
    addSmemSpilling(k, name, aim, out, notes);
}

// How much of the objective a kernel holds, for ranking without kernel times.
long weight(const SpaceKernel &k, Aim aim) { return aim == Aim::FewerSpills ? k.spillBytes : k.registers; }

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
      s.library = libraryKernel(k.demangled);
      out.push_back(s);
    }
    SpaceKernel &s = out[it->second];
    s.registers = std::max(s.registers, k.registers);
    s.spillBytes = std::max(s.spillBytes, k.spillStores + k.spillLoads);
    if (k.ptxKnown) {
      s.ptxKnown = true;
      s.maxThreads = k.ptxMaxThreads;
      s.minBlocks = k.ptxMinBlocks;
      s.sourceMaxnreg = k.ptxMaxnreg;
      s.setmaxnreg = s.setmaxnreg || k.ptxSetmaxnreg;
      s.dynamicShared = s.dynamicShared || k.ptxDynamicShared;
    }
    s.relocatable = s.relocatable || k.relocatable;
    s.deviceDebug = s.deviceDebug || k.deviceDebug;
    if (s.splitProblem.empty())
      s.splitProblem = k.splitProblem;
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

namespace {

// Kernels whose compile can take PTX edits; the others, one line per reason.
std::vector<const SpaceKernel *> splittable(const std::vector<const SpaceKernel *> &kernels,
                                            std::vector<std::string> &notes) {
  std::vector<const SpaceKernel *> out;
  std::map<std::string, std::vector<std::string>> unsplit;   // why -> kernels
  for (const auto *k : kernels)
    if (k->splitProblem.empty())
      out.push_back(k);
    else
      unsplit[k->splitProblem].push_back(kernelLabel(k->demangled, k->mangled));
  for (const auto &[why, names] : unsplit)
    notes.push_back("per-kernel controls: none for " + std::to_string(names.size()) + " kernel(s) (" + names[0] +
                    (names.size() > 1 ? ", ..." : "") + "): their compile cannot be split for PTX edits (" + why +
                    "); compile each CUDA source to an object (nvcc -c, or -dc with -rdc) to give them per-kernel "
                    "controls");
  return out;
}

// Only the kernels the benchmark launched, by GPU time (order), largest first.
std::vector<const SpaceKernel *> launchedOnly(const std::vector<const SpaceKernel *> &kernels,
                                              const std::vector<std::string> &order, std::vector<std::string> &notes) {
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < order.size(); ++i)
    rank.insert({order[i], i});
  std::vector<const SpaceKernel *> launched;
  for (const auto *k : kernels)
    if (rank.count(k->key))
      launched.push_back(k);
    else
      notes.push_back("per-kernel controls: " + kernelLabel(k->demangled, k->mangled) +
                      " keeps the default compile: the benchmark does not launch it");
  std::stable_sort(launched.begin(), launched.end(),
                   [&](const SpaceKernel *a, const SpaceKernel *b) { return rank[a->key] < rank[b->key]; });
  return launched;
}

// A library's kernels (CUB, Thrust, CUTLASS) only where kernel_controls.kernels
// names them: each release renames them, so a lock keyed on one breaks.
std::vector<const SpaceKernel *> projectKernelsOnly(const std::vector<const SpaceKernel *> &kernels,
                                                    std::vector<std::string> &notes) {
  std::vector<const SpaceKernel *> out;
  std::vector<std::string> left;
  for (const auto *k : kernels)
    if (k->library)
      left.push_back(kernelLabel(k->demangled, k->mangled));
    else
      out.push_back(k);
  if (!left.empty())
    notes.push_back("per-kernel controls: none for " + std::to_string(left.size()) +
                    " CUB, Thrust or CUTLASS kernel(s) (" + left[0] + (left.size() > 1 ? ", ..." : "") +
                    "): a library's kernels are renamed by its releases, so a lock keyed on one breaks; name them "
                    "in kernel_controls.kernels (ciq_tune(... KERNELS <regex>)) to tune them");
  return out;
}

// Under a spill objective a kernel that spills nothing has nothing a
// directive could lower: it takes no place among kernel_controls.max_kernels.
std::vector<const SpaceKernel *> withSomethingToGain(const std::vector<const SpaceKernel *> &kernels, Aim aim,
                                                     const std::string &objective, std::vector<std::string> &notes) {
  if (aim != Aim::FewerSpills || objective == "stack_frame")   // a stack frame without spills can still shrink
    return kernels;
  std::vector<const SpaceKernel *> out;
  std::vector<std::string> none;
  for (const auto *k : kernels)
    if (k->spillBytes > 0)
      out.push_back(k);
    else
      none.push_back(kernelLabel(k->demangled, k->mangled));
  if (!none.empty() && !out.empty())
    notes.push_back("per-kernel controls: none for " + std::to_string(none.size()) + " kernel(s) (" + none[0] +
                    (none.size() > 1 ? ", ..." : "") + "): they spill nothing, so no directive can lower " +
                    objective + " there");
  // Nothing spills anywhere: every kernel stays, and each says why it gets none.
  return out.empty() ? kernels : out;
}

} // namespace

bool libraryKernel(const std::string &demangled) {
  // The qualified name, after a return type ("void cub::...").
  std::string name = demangled.rfind("void ", 0) == 0 ? demangled.substr(5) : demangled;
  for (const char *ns : {"cub::", "thrust::", "cutlass::", "cute::", "CUB_", "THRUST_"})
    if (name.rfind(ns, 0) == 0)
      return true;
  return false;
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
  chosen = splittable(chosen, r.notes);
  if (!filter)
    chosen = projectKernelsOnly(chosen, r.notes);
  chosen = withSomethingToGain(chosen, aimOf(cfg.objective), cfg.objective, r.notes);
  if (!order.empty())
    chosen = launchedOnly(chosen, order, r.notes);
  else   // no kernel times: the project's own kernels first, most of the objective first
    std::stable_sort(chosen.begin(), chosen.end(), [aim = aimOf(cfg.objective)](const SpaceKernel *a, const SpaceKernel *b) {
      return a->library != b->library ? !a->library : weight(*a, aim) > weight(*b, aim);
    });
  if ((int)chosen.size() > cfg.maxKernels) {
    std::string left;
    for (size_t i = cfg.maxKernels; i < chosen.size() && i < (size_t)cfg.maxKernels + 3; ++i)
      left += (left.empty() ? "" : ", ") + kernelLabel(chosen[i]->demangled, chosen[i]->mangled);
    size_t more = chosen.size() - std::min(chosen.size(), (size_t)cfg.maxKernels + 3);
    r.notes.push_back("per-kernel controls: the first " + std::to_string(cfg.maxKernels) + " of " +
                      std::to_string(chosen.size()) + " kernels (kernel_controls.max_kernels; " +
                      (order.empty() ? "the project's own before CUB, Thrust or CUTLASS kernels, the most " +
                                           (aimOf(cfg.objective) == Aim::FewerSpills ? std::string("spill bytes")
                                                                                     : std::string("registers")) +
                                           " first"
                                     : std::string("the most GPU time first")) +
                      "); left out: " + left + (more ? " and " + std::to_string(more) + " more" : "") +
                      "; choose others with kernel_controls.kernels (ciq_tune(... KERNELS <regex>))");
    chosen.resize(cfg.maxKernels);
  }
  std::map<std::string, int> seen;
  for (const auto *k : chosen) {
    std::string label = kernelLabel(k->demangled, k->mangled);
    int n = ++seen[label];
    size_t controls = r.controls.size(), notes = r.notes.size();
    addControls(cfg, *k, "kernel." + label + (n > 1 ? "#" + std::to_string(n) : ""), r.controls, r.notes);
    // Chosen, yet no directive can move the objective: say so, never nothing.
    if (r.controls.size() == controls && r.notes.size() == notes)
      r.notes.push_back("per-kernel controls: none for " + label + ": no directive of kernel_controls.directives (" +
                        llvm::join(cfg.directives, ", ") + ") can improve " +
                        (cfg.objective.empty() ? std::string("the objective") : cfg.objective) + " there (" +
                        std::to_string(k->registers) + " registers, " + std::to_string(k->spillBytes) +
                        " spill bytes" + (k->ptxKnown && k->maxThreads <= 0 ? ", no __launch_bounds__" : "") +
                        (k->ptxKnown ? "" : ", its PTX unread") + ")");
  }
  return r;
}

} // namespace ciq
