// What a search's results depend on besides the candidate: the sources and
// headers of the tuned objects (from the build's dependency records), the
// CUDA compiler, ciq.yaml and the space files. Recorded in the journal's
// "inputs" line after the baseline build; `ciq resume` refuses to mix
// results of changed inputs.
#pragma once
#include "engine/compile/BuildDriver.h"
#include "engine/config/Config.h"

#include <nlohmann/json.hpp>
#include <string>

namespace ciq {

// {"op":"inputs","files":{path:sha256},"compiler":{"path","version"},
//  "config":{path:sha256},"space_files":{path:sha256}}
nlohmann::json captureInputs(const TuneConfig &cfg, const std::vector<CudaObject> &objects);

// "" when every recorded input is as it was; else one line naming the first
// change (file and what happened to it).
std::string changedInput(const nlohmann::json &recorded, const TuneConfig &cfg);
// A re-tune after an edit of the program (issue 49 item 5): the first
// source or header that changed when ciq.yaml, the space files and the CUDA
// compiler are as recorded; "" otherwise (nothing changed, or more than the
// program did).
std::string onlySourcesChanged(const nlohmann::json &recorded, const TuneConfig &cfg);

} // namespace ciq
