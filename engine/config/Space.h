// The search space: controls, their domains, and how a point renders onto
// the compiler's command line (docs/search-space.md).
//
// A point holds, per control, the index of its value in the domain, or
// kUnset: the control is left out and the compiler's default applies. The
// all-unset point is the baseline: exactly the user's own build.
#pragma once
#include "engine/config/Constraints.h"
#include "engine/record/Rendered.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

enum class RenderKind { Ptxas, Nvcc, Define, Acf, Kernel };
enum class DomainKind { Choice, Range, Literal, LogSampling, AcfFiles };

struct Control {
  std::string name;
  RenderKind render = RenderKind::Ptxas;
  // Ptxas/Nvcc: an option template; "{}" is replaced by the value
  // ("--opt-level={}"); a template without "{}" is a flag whose values are
  // only on/off. Define: the macro name (renders -DNAME=value). Kernel: the
  // directive (common/KernelDirective.h), its value the number it gets.
  std::string option;
  // Kernel: the entry it is written into (kernelKey) and its short
  // demangled name; added after the baseline (engine/config/KernelSpace.h).
  std::string kernelKey, kernelLabel;
  // Ptxas/Nvcc: the one translation unit the option is for (`unit: src/a.cu`,
  // common/UnitOptions.h); "" : every compile.
  std::string unit;
  std::string acfStage = "ptxas";      // Acf: which tool gets --apply-controls
  DomainKind domain = DomainKind::Choice;
  std::vector<std::string> values;     // the domain, materialised; for Acf: absolute file paths
  std::vector<std::string> acfSha256;  // Acf: SHA-256 of each file's bytes
  double knockoutProb = -1;            // P(unset) when sampling; <0: uniform over values and unset
  bool canUnset = true;                // false: `required: true`, always set
  bool changesResults = false;         // `changes_results: true`: may change the program's output (fmad, ftz)
  std::string compilerDefault;         // `compiler_default:` the value the compiler uses when unset ("" unknown)
  std::string help;
  std::string origin;                  // which file (and line) declared it
  // The space file that declared it, and the compiler release that file says
  // it was written for (`compiler_version: "13.0"`, "" when it says none).
  std::string spaceName, spaceCompilerVersion;
};

// Where a piece of the space came from (recorded in the lockfile).
struct SpaceSource {
  std::string name;       // "ptxas-13.0-default", a file path, or provider spec
  std::string provider;   // "builtin", "file", "release"
  std::string tag;        // release tag for release-backed spaces
  std::string sha256;     // of the file's bytes
};

struct SearchSpace {
  std::vector<Control> controls;
  std::vector<SpaceSource> sources;
  // `constraints:` as written (ciq.yaml and space files), and compiled once
  // the space is final (compileConstraints; loadConfig does it).
  std::vector<Constraint> constraints;
  std::shared_ptr<const ConstraintSet> compiled;

  // Number of distinct points (product of domain sizes, unset included).
  double size() const;
  // Those of them the constraints allow (size() without constraints).
  FeasibleCount feasibleSize() const;
  // Whether p satisfies every constraint: a point that does not is never
  // proposed, rendered, built or counted.
  bool feasible(const Point &p) const { return !compiled || compiled->holds(p); }
  // "1200 points" or "1200 points, 310 within the constraints" ("about 310"
  // when estimated): what `ciq sample`, `ciq doctor` and `ciq tune` print.
  std::string sizeSummary() const;
  // Compiles `constraints`; false with `error` set (ConstraintSet::compile).
  bool compileConstraints(std::string &error);
  // SHA-256 of the canonical description of every control and domain.
  std::string identity() const;
  Point baseline() const { return Point(controls.size(), kUnset); }
  int states(size_t control) const;   // values + unset
  int find(const std::string &name) const;  // index or -1
};

// What a point puts on the command line (Rendered, engine/record/Rendered.h).
Rendered render(const SearchSpace &space, const Point &p);

} // namespace ciq
