#include "engine/assets/HttpRefusal.h"

#include <cstdlib>
#include <ctime>

namespace ciq {
namespace {

// The proxy libcurl used for `url`, as its variables name it.
std::string proxyFor(const std::string &url) {
  static const char *const kHttps[] = {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"};
  static const char *const kHttp[] = {"http_proxy", "all_proxy", "ALL_PROXY", "ALL_PROXY"};
  const char *const *vars = url.rfind("https:", 0) == 0 ? kHttps : kHttp;
  for (int i = 0; i < 4; ++i)
    if (const char *p = getenv(vars[i]); p && *p) {
      // Never a password in an error line: user:password@ becomes ***@.
      std::string v = p;
      size_t scheme = v.find("://"), at = v.find('@');
      if (at != std::string::npos)
        v = v.substr(0, scheme == std::string::npos ? 0 : scheme + 3) + "***" + v.substr(at);
      return std::string(vars[i]) + "=" + v;
    }
  return "the proxy";
}

std::string hostOf(const std::string &url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  return url.substr(start, url.find('/', start) - start);
}

const char *kMirror = "or use an offline mirror (CIQ_SEARCH_SPACES_DIR, CIQ_BOOSTER_PACKS_DIR)";

std::string resetText(const std::string &reset, int64_t now) {
  char *end = nullptr;
  long long at = strtoll(reset.c_str(), &end, 10);
  if (reset.empty() || !end || *end || at <= 0)
    return "";
  time_t t = (time_t)at;
  struct tm utc;
  gmtime_r(&t, &utc);
  char buf[32];
  strftime(buf, sizeof buf, "%H:%M UTC", &utc);
  long long mins = at > now ? (at - now + 59) / 60 : 0;
  return std::string("; it resets at ") + buf + " (in " + std::to_string(mins) + " min)";
}

} // namespace

std::optional<std::string> permanentRefusal(const HttpAnswer &a, int64_t nowEpoch) {
  if (a.connectStatus == 407 || a.status == 407)
    return "cannot download " + a.url + ": " + proxyFor(a.url) +
           " wants credentials (HTTP 407 Proxy Authentication Required); give them in the proxy variable "
           "(http://user:password@host:port), " + kMirror;
  if (a.connectStatus >= 400)
    return "cannot download " + a.url + ": " + proxyFor(a.url) + " refused to connect to " + hostOf(a.url) +
           " (HTTP " + std::to_string(a.connectStatus) + " to CONNECT); ask for the host to be allowed, add it to "
           "no_proxy if it is reachable without the proxy, " + kMirror;
  if ((a.status == 403 || a.status == 429) && a.rateRemaining == "0")
    return "cannot download " + a.url + ": the GitHub API rate limit is spent (HTTP " + std::to_string(a.status) +
           ", x-ratelimit-remaining 0" + resetText(a.rateReset, nowEpoch) +
           "); set GITHUB_TOKEN (a token's limit is far higher) or wait for the reset, " + kMirror;
  // A server (a mirror, a release host) that limits how often it is asked
  // (issue 51 item 9): said, not retried at once, which only asks again.
  if (a.status == 429) {
    std::string wait;
    char *end = nullptr;
    long long secs = strtoll(a.retryAfter.c_str(), &end, 10);
    if (!a.retryAfter.empty() && end && !*end && secs >= 0)
      wait = "; it asks for " + std::to_string(secs) + " s before the next request (Retry-After)";
    else if (!a.retryAfter.empty())
      wait = "; it asks to wait until " + a.retryAfter + " (Retry-After)";
    return "cannot download " + a.url + ": " + hostOf(a.url) +
           " refused the request as one too many (HTTP 429 Too Many Requests" + wait + "); run again later, " +
           kMirror;
  }
  return std::nullopt;
}

} // namespace ciq
