// Refusals no retry can change (issue 41 item 10): a proxy that wants
// credentials or will not connect to the host, and GitHub's API rate limit
// spent until its reset time. Said as what they are, with what to do,
// instead of "HTTP 403/407", and not retried four times.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace ciq {

struct HttpAnswer {
  std::string url;
  long status = 0;          // the server's (or a proxy's, for a plain http URL) status
  long connectStatus = 0;   // a proxy's answer to CONNECT (https through a proxy); 0: none
  std::string rateRemaining; // x-ratelimit-remaining, "" when absent
  std::string rateReset;     // x-ratelimit-reset (seconds since the epoch), "" when absent
  std::string retryAfter;    // Retry-After (seconds, or an HTTP date), "" when absent
};

// The one line saying what refused the request and what to do; nullopt for
// anything a retry may change. `nowEpoch`: the current time, for the reset.
std::optional<std::string> permanentRefusal(const HttpAnswer &a, int64_t nowEpoch);

} // namespace ciq
