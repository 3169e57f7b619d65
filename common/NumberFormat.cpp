#include "common/NumberFormat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ciq::fmt {

std::string value(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  double a = std::fabs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e7)) {
    snprintf(buf, sizeof buf, "%.3e", v);
    return buf;
  }
  int decimals = a == 0 ? 0 : std::max(0, 3 - (int)std::floor(std::log10(a)));
  snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.')
      s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string ratio(double r) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.3fx", r);
  return buf;
}

std::string pValue(double p) {
  if (std::isnan(p) || p < 0)
    return "p = n/a";
  if (p < 1e-4)
    return "p < 0.0001";
  char buf[64];
  snprintf(buf, sizeof buf, "p = %.2g", p);
  return buf;
}

std::string percent(double pct, size_t runs) {
  if (runs < 2)
    return "n/a (" + std::to_string(runs) + " run" + (runs == 1 ? "" : "s") + ")";
  if (pct < 0 || std::isnan(pct))
    return "n/a";
  char buf[64];
  snprintf(buf, sizeof buf, "%.1f%%", pct);
  return buf;
}

} // namespace ciq::fmt
