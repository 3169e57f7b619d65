// Builds a SearchSpace from the `space:` section of ciq.yaml: user controls,
// included built-in or release-backed spaces, and exclusions.
#pragma once
#include "engine/config/Space.h"
#include "engine/config/YamlUtil.h"

namespace ciq {

// `node` is the value of `space:` (a map, or a list of maps) read from the
// file of `reader`; relative paths are taken from `baseDir`. Throws ConfigError.
SearchSpace loadSpace(const YAML::Node &node, const YamlReader &reader, const std::string &baseDir);

// Appends the `constraints:` list `n` (strings, each with its file:line)
// to space.constraints; they are compiled once the space is final
// (SearchSpace::compileConstraints). Throws ConfigError.
void readConstraints(SearchSpace &space, const YAML::Node &n, const YamlReader &r, const std::string &key);

// Loads a space file by built-in name (e.g. "ptxas-13.0-default") or path.
SearchSpace loadSpaceFile(const std::string &nameOrPath, const std::string &baseDir);

// The space of a config without `space:`: ptxas-13.0-default less its
// changes_results controls (--fmad); with `withNumerics` (the benchmark's
// output is compared with the baseline's, whatever the objective), all of
// ptxas-13.0-default plus nvcc-13.0-default's numerics controls (ftz,
// prec-div, prec-sqrt, use-fast-math, all changes_results): runtime gains
// often lie there, and the comparison keeps them honest; without it a
// search would change the program's results unseen (issue 41: compile-only
// tunes chose --fmad=false for fewer registers). Throws ConfigError.
SearchSpace defaultSpace(bool withNumerics, const std::string &baseDir);

} // namespace ciq
