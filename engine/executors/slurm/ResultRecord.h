// Files the engine and `ciq worker` hand each other (docs/cluster.md): the
// candidate a job evaluates, and the result record the worker writes. A
// result is written beside and renamed into place after an fsync, so the
// engine (polling over shared storage) sees all of it or nothing, and a
// finished result survives a kill of either side.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ciq {

bool writeJsonDurably(const std::string &path, const nlohmann::json &j, std::string &error);
// The JSON object in path; nullopt when missing or not (yet) valid JSON.
std::optional<nlohmann::json> readJsonFile(const std::string &path);

// Seconds since the epoch, with sub-second resolution (scheduling overhead).
double nowEpochSeconds();

// This machine's name as Slurm calls it ($SLURMD_NODENAME), else the host name.
std::string nodeName();

} // namespace ciq
