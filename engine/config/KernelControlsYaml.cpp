// ciq.yaml's `kernel_controls:` section (docs/config.md, "Per-kernel controls").
#include "engine/config/Config.h"
#include "engine/config/Metrics.h"
#include "engine/config/YamlUtil.h"

#include "common/KernelDirective.h"

#include <regex>

namespace ciq {

KernelControlsConfig parseKernelControls(const YAML::Node &n, const YamlReader &r) {
  KernelControlsConfig k;
  k.origin = r.where(n, "kernel_controls");
  if (n.IsScalar()) { // kernel_controls: on | off | auto
    k.mode = r.str(n, "kernel_controls");
  } else {
    r.needMap(n, "kernel_controls");
    r.onlyKeys(n, "kernel_controls", {"mode", "kernels", "max_kernels", "directives", "scoring", "budget"});
    if (n["mode"]) k.mode = r.str(n["mode"], "kernel_controls.mode");
    if (n["kernels"]) {
      k.kernels = r.str(n["kernels"], "kernel_controls.kernels");
      try { // said now, not after the baseline has been measured
        std::regex check(k.kernels, std::regex::ECMAScript);
      } catch (const std::regex_error &e) {
        r.fail(n["kernels"], "kernel_controls.kernels", "'" + k.kernels + "' is not a regular expression (" + e.what() +
                                                            "); write an ECMAScript regex such as 'sgemm|reduce'");
      }
    }
    if (n["max_kernels"]) k.maxKernels = (int)r.integer(n["max_kernels"], "kernel_controls.max_kernels", 1, 64);
    if (n["scoring"]) {
      k.scoring = r.str(n["scoring"], "kernel_controls.scoring");
      if (k.scoring != "per_kernel" && k.scoring != "whole_program")
        r.fail(n["scoring"], "kernel_controls.scoring", "expected per_kernel or whole_program, got '" + k.scoring + "'");
    }
    if (n["budget"]) // two binaries at least: a round of trials and the combination of the bests
      k.budget = (int)r.integer(n["budget"], "kernel_controls.budget", 2, 100000);
    if (n["directives"]) {
      k.directives = r.strings(n["directives"], "kernel_controls.directives");
      for (const auto &d : k.directives)
        if (!knownDirective(d))
          r.fail(n["directives"], "kernel_controls.directives",
                 "'" + d + "' is not a per-kernel control; use maxnreg, minnctapersm or smem_spilling");
    }
  }
  if (k.mode == "true") k.mode = "on";
  if (k.mode == "false") k.mode = "off";
  if (k.mode != "auto" && k.mode != "on" && k.mode != "off")
    r.fail(n, "kernel_controls", "expected on, off or auto, got '" + k.mode + "'");
  return k;
}

bool kernelControlsOn(const TuneConfig &c) {
  if (c.kernelControls.mode != "auto")
    return c.kernelControls.mode == "on";
  // By default where the gain is a program's speed: a compile-only search
  // would trade every kernel's occupancy for fewer spills without measuring it.
  return c.spaceIsDefault && c.benchmark.enabled && !isCompileMetric(c.objectives.front().metric);
}

} // namespace ciq
