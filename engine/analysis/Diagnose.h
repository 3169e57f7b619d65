// `ciq diagnose`: names what went wrong in a search from its results.csv and
// journal.jsonl. Each finding carries the threshold it used, the likely cause
// and the next step (docs/troubleshooting.md has the same table for people).
#pragma once
#include "engine/analysis/RunData.h"

#include <llvm/Support/raw_ostream.h>
#include <string>
#include <vector>

namespace ciq {

struct DiagnoseThresholds {
  int identicalMinCandidates = 4;     // distinct candidates needed to call scores identical
  double identicalRelTolerance = 1e-9;
  double risingInvalidDelta = 0.25;   // late minus early invalid rate (fraction)
  double risingInvalidLate = 0.30;    // late invalid rate at least this
  int minGenerations = 3;             // for trends over generations
  double stalledRelImprovement = 1e-3;  // smaller gains do not count as progress
  double highCvPercent = 5.0;         // median CV% of OK evaluations
  double lowDiversityUnique = 0.5;    // distinct candidates / evaluations, late generations
  double lowDiversityDistance = 0.1;  // mean normalised Hamming distance of journal points
};

struct Finding {
  std::string kind;        // baseline_invalid | compiler_crash | identical_scores | identical_device_code | all_invalid |
                           // rising_invalid | stalled_best | high_cv | noise_source | low_diversity
  std::string title;       // what was seen, with the numbers
  std::string threshold;   // the rule that fired
  std::string cause;
  std::string next;        // the command or setting to change
  std::vector<std::string> details;
};

std::vector<Finding> diagnose(const RunData &run, const DiagnoseThresholds &t = {});

// Prints the findings (or the clean verdict with the checks made).
void printFindings(const RunData &run, const std::vector<Finding> &findings, llvm::raw_ostream &os);

} // namespace ciq
