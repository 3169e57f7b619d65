// `ciq report`: an HTML page with SVG plots of one search, drawn by gnuplot
// (run as a subprocess with its SVG terminal): best score against
// evaluations, score distribution per generation, every candidate against the
// baseline sorted (S-curve), and the Pareto front of the first two objectives
// when the search has several.
#pragma once
#include "engine/analysis/RunData.h"

#include <string>
#include <vector>

namespace ciq {

struct ReportResult {
  std::string htmlPath;
  std::vector<std::string> svgPaths;
};

// Writes index.html, *.svg, and the gnuplot data and scripts (*.dat, *.gp,
// kept so a plot can be redrawn by hand) into outDir. nullopt with a one-line
// error when gnuplot is missing or fails.
std::optional<ReportResult> writeReport(const RunData &run, const std::string &outDir,
                                        std::string &error);

} // namespace ciq
