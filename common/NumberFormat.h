// One number format for every figure ciq prints (issue 32 item 6): the tune's
// summary, `ciq validate`, `ciq lock show` and `ciq report` show a time, a
// ratio, a p-value or a CV the same way, so two lines can be compared at a
// glance and a figure copied from one reads the same in the other.
#pragma once

#include <string>

namespace ciq::fmt {

// A measured value (a time, a count, a score): 4 significant digits, no
// exponent between 1e-3 and 1e7, trailing zeros dropped ("5.18", "0.8424",
// "680", "12350").
std::string value(double v);

// A speedup or any other ratio: 3 decimals and an x ("1.080x").
std::string ratio(double r);

// A p-value with its name: "p = 0.65", "p = 0.0031", "p < 0.0001" (smaller
// p-values are all "certain" for a reader; the journal keeps the exact one).
std::string pValue(double p);

// A coefficient of variation or noise in percent, one decimal ("2.4%");
// fewer than 2 runs have none: "n/a (1 run)" (never "0.0%", which reads as
// "no noise").
std::string percent(double pct, size_t runs = 2);

} // namespace ciq::fmt
