// The report's per-kernel table (issue 50 item 4): each kernel of the
// baseline and the winner side by side, with its registers, spill bytes,
// theoretical occupancy, GPU time where the benchmark was traced, and the
// per-kernel directives the winner gives it.
#pragma once
#include "engine/analysis/RunData.h"

#include <string>

namespace ciq {

// The journal line whose measurements stand for `e`: its own, or, for a
// twin that reused an earlier result (duplicate_of) and so recorded no
// kernels or kernel times of its own, the line of the evaluation it reused.
// nullptr without a journal.
const Evaluation *measuredLine(const RunData &run, const RecordedEval *e);

// The winner as the summary, the lock and validate name it: the minimized
// build (<id>-min) of `best` where minimization made one, else `best`.
const RecordedEval *shownWinner(const RunData &run, const RecordedEval *best);

// "<h2>Kernels</h2>..." or "" when neither build recorded kernels.
std::string kernelTableHtml(const RunData &run, const RecordedEval *base, const RecordedEval *best);

// The controls of an evaluation as the options they render (the summary's
// "winning options"), never the raw JSON of the results.csv cell.
std::string renderedOptions(const RecordedEval &e);

// `s` safe inside HTML text and quoted attributes (either quote): the one
// escaper of the report's pages.
std::string htmlEscape(const std::string &s);

} // namespace ciq
