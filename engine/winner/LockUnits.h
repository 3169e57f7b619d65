// The winner's device code per translation unit, in the lock (issue 41 item
// 1): `ciq lock verify` can then say which translation unit's device code
// differs, instead of guessing whether the lock was applied at all.
#pragma once
#include "common/Lockfile.h"
#include "engine/record/Evaluation.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ciq {

// {"<source relative to the lock's folder>": "<device-code SHA-256>"}, for
// lock.extra["device_code_units"]; relative, so a checkout elsewhere matches.
nlohmann::json lockUnitsOf(const Evaluation &win, const std::string &lockDir);

// One phrase naming the translation units whose device code differs from the
// lock's ("kern.cu: 3f2a1c0d9e8b... against the winner's 9c1d...; helper.cu
// matches"), from (absolute source, SHA-256) pairs of the build; "" when the
// lock records no units (written by an earlier ciq) or the sources are unknown.
std::string unitDifferences(const Lockfile &l, const std::string &lockDir,
                            const std::vector<std::pair<std::string, std::string>> &built);

} // namespace ciq
