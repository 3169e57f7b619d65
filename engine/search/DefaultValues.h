// A candidate that sets a control to what the compiler does when the control
// is unset builds the unset point's program: `--opt-level=3` is ptxas's
// default, so {opt-level=3, x} renders other arguments than {x} but gives
// the same device code (issue 41 item 7: compile-only tunes compiled 2-3x
// their budget, most of the extra configurations such twins). The search
// maps each proposal to its effective point before anything is compiled, so
// those twins are never built.
//
// What is known to equal unset:
//  - a ptxas control's value equal to its `compiler_default:` (the curated
//    space gives opt-level 3, register-usage-level 5, fmad true, as
//    `ptxas --help` of 13.0 states them);
//  - ptxas's --allow-expensive-optimizations, whose default follows the
//    effective opt level ("enable for optimization level >= O2").
// A default holds only where nothing else sets the option: a build whose own
// compile lines pass it to ptxas (`-Xptxas -O1`), change the device
// optimization level (-G, -dopt), or whose lines ciq cannot read (a command
// build, FindCUDA), or another control that renders it, keeps the control
// as proposed.
#pragma once
#include "engine/config/Space.h"

#include <string>
#include <vector>

namespace ciq {

struct DefaultRules {
  // Per control: the value index that equals unset (-1: none known).
  std::vector<int> unsetIndex;
  // --allow-expensive-optimizations (-1: none, or its default is not known):
  // the control, the opt-level control (-1: none in the space), the opt
  // level when that one is unset, and the value indices of "true"/"false".
  int expensive = -1, optLevel = -1, defaultLevel = 3, expensiveTrue = -1, expensiveFalse = -1;
  std::vector<int> levelOf;   // the opt-level control's value index -> its level
  bool any() const;
};

// The rules for `space`, given the build's compile lines (each one's argv;
// commandsKnown false when they cannot be read) and the extra nvcc flags of
// the environment (NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS).
DefaultRules defaultRules(const SearchSpace &space, const std::vector<std::vector<std::string>> &commands,
                          bool commandsKnown, const std::string &envFlags);

// `p` with every control whose value equals unset left unset.
Point withDefaultsUnset(const DefaultRules &rules, const Point &p);

} // namespace ciq
