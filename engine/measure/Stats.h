// Statistics of benchmark samples: the summary ciq reports for every
// measurement (median, CV%) and Welch's t-test that `ciq validate` uses to
// decide whether a winner is really faster than the baseline.
#pragma once
#include <cstddef>
#include <vector>

namespace ciq {

// Values are in whatever unit the caller measured (ms for benchmark times).
struct Summary {
  size_t n = 0;
  double median = 0, mean = 0, stddev = 0, cvPercent = 0, min = 0, max = 0;
};

// stddev is the sample standard deviation (n-1 denominator; 0 when n < 2);
// cvPercent = 100 * stddev / |mean| (0 when the mean is 0). Empty input: all 0.
Summary summarize(const std::vector<double> &values);

// Two-sided Welch's unequal-variance t-test of mean(a) vs mean(b).
// t = (mean(a) - mean(b)) / sqrt(va/na + vb/nb); df by Welch-Satterthwaite;
// p from Boost.Math's Student's t distribution. Fewer than 2 samples in either
// set: t = 0, df = 0, p = 1 (no evidence). Both variances 0: p = 0 when the
// means differ (a certain difference), else 1.
struct WelchResult {
  double t = 0, df = 0, pValue = 1;
  double se = 0;   // standard error of mean(a) - mean(b): sqrt(va/na + vb/nb)
};
WelchResult welchTTest(const std::vector<double> &a, const std::vector<double> &b);

// Median of the values (mean of the two middle ones for even n); 0 when empty.
double median(std::vector<double> values);

// The noise figure adaptive repeats drive down: the half-width of the
// distribution-free 95% confidence interval of the median (order statistics
// at ranks n/2 -+ 0.98 sqrt(n), normal approximation of the binomial, clamped
// to the sample), relative to the median, in %. It assumes nothing about the
// shape of the run-time distribution, and one outlier moves it little.
// Where the ranks are clamped to the sample (fewer than about 10 values) the
// interval covers less than 95%, so the figure is at least Student's t
// half-width of the mean (t_0.975,n-1 stddev / sqrt(n), relative).
// Fewer than 2 values, or a median of 0: -1 (unknown).
double medianCiHalfWidthPercent(std::vector<double> values);

// One-sided Welch test that `candidate` is worse than `incumbent` (higher
// mean when minimizing, lower when maximizing): the p-value of that
// direction (1 when fewer than 2 samples on either side).
double pWorse(const std::vector<double> &candidate, const std::vector<double> &incumbent, bool minimize);

// Racing's stop rule: `candidate` (its runs so far) is significantly worse
// than `incumbent` (pWorse < alpha). From 2 runs; below 3 a spread of two
// runs is too weak a variance estimate to trust alone, so every run must
// also be worse than every run of the incumbent (ranges apart).
bool racedOut(const std::vector<double> &candidate, const std::vector<double> &incumbent, bool minimize,
              double alpha);

} // namespace ciq
