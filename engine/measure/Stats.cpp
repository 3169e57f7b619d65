#include "engine/measure/Stats.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <numeric>

namespace ciq {

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double hi = values[mid];
  if (values.size() % 2)
    return hi;
  double lo = *std::max_element(values.begin(), values.begin() + mid);
  return (lo + hi) / 2;
}

namespace {
double mean(const std::vector<double> &v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}
// The values minus k (one of the values): equal values become exact zeros,
// whose sums do not round. Without it 12 runs of 3.3 and 7 runs of 3.3 have
// means one ulp apart and variances of pure rounding error, and Welch's
// test called them different (p = 0.002).
std::vector<double> shifted(const std::vector<double> &v, double k) {
  std::vector<double> out;
  out.reserve(v.size());
  for (double x : v)
    out.push_back(x - k);
  return out;
}
// Sample variance (n-1); the caller guarantees n >= 2.
double sampleVariance(const std::vector<double> &v, double m) {
  double ss = 0;
  for (double x : v)
    ss += (x - m) * (x - m);
  return ss / double(v.size() - 1);
}
} // namespace

Summary summarize(const std::vector<double> &values) {
  Summary s;
  s.n = values.size();
  if (values.empty())
    return s;
  s.mean = mean(values);
  s.median = median(values);
  auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  s.min = *mn;
  s.max = *mx;
  if (s.n >= 2) {
    std::vector<double> d = shifted(values, values[0]);
    s.stddev = std::sqrt(sampleVariance(d, mean(d)));
  }
  if (s.mean != 0)
    s.cvPercent = 100.0 * s.stddev / std::fabs(s.mean);
  return s;
}

WelchResult welchTTest(const std::vector<double> &a, const std::vector<double> &b) {
  WelchResult r;
  if (a.size() < 2 || b.size() < 2)
    return r;
  // Shifted by a common value: the difference and the spreads are unchanged,
  // and identical runs give exactly 0 for both.
  std::vector<double> as = shifted(a, a[0]), bs = shifted(b, a[0]);
  double ma = mean(as), mb = mean(bs);
  double na = double(a.size()), nb = double(b.size());
  double sa = sampleVariance(as, ma) / na, sb = sampleVariance(bs, mb) / nb;
  double se2 = sa + sb;
  r.se = std::sqrt(se2);
  if (se2 == 0) {
    // Zero spread on both sides: the t statistic is infinite (or undefined).
    r.df = na + nb - 2;
    if (ma != mb) {
      r.t = ma > mb ? std::numeric_limits<double>::infinity()
                    : -std::numeric_limits<double>::infinity();
      r.pValue = 0;
    }
    return r;
  }
  r.t = (ma - mb) / std::sqrt(se2);
  r.df = se2 * se2 / (sa * sa / (na - 1) + sb * sb / (nb - 1));
  boost::math::students_t dist(r.df);
  r.pValue = 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(r.t)));
  return r;
}

double medianCiHalfWidthPercent(std::vector<double> values) {
  size_t n = values.size();
  if (n < 2)
    return -1;
  std::sort(values.begin(), values.end());
  double m = median(values);
  if (m == 0)
    return -1;
  // 1-based ranks of the 95% interval's ends: n/2 -+ 1.96 sqrt(n)/2 (+1 above).
  double half = 1.96 * std::sqrt(double(n)) / 2;
  long lo = (long)std::floor(double(n) / 2 - half), hi = (long)std::ceil(double(n) / 2 + half + 1);
  bool clamped = lo < 1 || hi > (long)n;
  lo = std::clamp(lo, 1L, (long)n);
  hi = std::clamp(hi, 1L, (long)n);
  double orderStat = 100.0 * (values[hi - 1] - values[lo - 1]) / 2 / std::fabs(m);
  if (!clamped)
    return orderStat;
  // Few runs: the sample's extremes cover the median with less than 95%
  // (75% for 3 runs), and 3 close draws of a noisy program would pass. Then
  // the Student's t interval's half-width (t_0.975,n-1 s / sqrt(n)) bounds
  // it from below: wide for few runs unless the runs really agree.
  Summary s = summarize(values);
  boost::math::students_t t(double(n - 1));
  double tHalf = 100.0 * boost::math::quantile(boost::math::complement(t, 0.025)) * s.stddev / std::sqrt(double(n)) /
                 std::fabs(m);
  return std::max(orderStat, tHalf);
}

double pWorse(const std::vector<double> &candidate, const std::vector<double> &incumbent, bool minimize) {
  WelchResult w = welchTTest(candidate, incumbent);
  if (w.df == 0 && w.pValue == 1)
    return 1;
  // t > 0: the candidate's mean is higher. Worse is higher when minimizing.
  bool worseSide = minimize ? w.t > 0 : w.t < 0;
  return worseSide ? w.pValue / 2 : 1 - w.pValue / 2;
}

bool racedOut(const std::vector<double> &candidate, const std::vector<double> &incumbent, bool minimize,
              double alpha) {
  if (candidate.size() < 2 || incumbent.size() < 2 || pWorse(candidate, incumbent, minimize) >= alpha)
    return false;
  if (candidate.size() >= 3)
    return true;
  auto [cLo, cHi] = std::minmax_element(candidate.begin(), candidate.end());
  auto [iLo, iHi] = std::minmax_element(incumbent.begin(), incumbent.end());
  return minimize ? *cLo > *iHi : *cHi < *iLo;
}

} // namespace ciq
