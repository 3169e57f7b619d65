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

// `source` relative to the lock's folder, as device_code_units and
// kernel_units key it.
std::string lockRelative(const std::string &source, const std::string &lockDir);

// "spill_kernel.cu (sm_90)", for each unit the lock records `kernel` in
// (Lockfile::kernelUnits); "" when it records none (a lock written before).
std::string kernelUnitsPhrase(const Lockfile &l, const std::string &kernel);

// Lockfile::kernelUnits: for each per-kernel control of the winner, the
// translation units (relative to the lock's folder) whose PTX had its kernel
// and for which architectures, from the winner's objects. A kernel no object
// recorded (an older journal) is left out: the lock then cannot name it when
// it is renamed, as before.
KernelUnits kernelUnitsOf(const Evaluation &win, const std::string &lockDir);

// One phrase naming the translation units whose device code differs from the
// lock's ("kern.cu: 3f2a1c0d9e8b... against the winner's 9c1d...; helper.cu
// matches"), from (absolute source, SHA-256) pairs of the build; "" when the
// lock records no units (written by an earlier ciq) or the sources are unknown.
std::string unitDifferences(const Lockfile &l, const std::string &lockDir,
                            const std::vector<std::pair<std::string, std::string>> &built);

} // namespace ciq
