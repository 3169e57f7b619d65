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

// The space of a config without `space:`: ptxas-13.0-default; with
// `withNumerics` (a runtime objective whose output is compared with the
// baseline's), also nvcc-13.0-default's numerics controls (ftz, prec-div,
// prec-sqrt, use-fast-math, all changes_results): runtime gains often lie
// there, and the comparison keeps them honest. Throws ConfigError.
SearchSpace defaultSpace(bool withNumerics, const std::string &baseDir);

// Checks each ptxas/nvcc option template against the installed compiler's
// own --help, before any build. A space written for another release
// (compiler_version) gets one warning naming the space and the release found,
// and its options that compiler does not have are left out with a note; a
// value outside an option's "Allowed values" is left out with a note. An
// option missing from --help in a space for this release (or for none) is a
// misspelling: ConfigError.
void checkOptionsKnown(SearchSpace &space);

} // namespace ciq
