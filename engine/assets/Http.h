// HTTP through libcurl for release assets: GET into memory (release API JSON)
// and downloads to a file (".part" then an atomic rename), with connect and
// total timeouts, a stall limit, retries with exponential backoff, redirects
// followed and the usual proxy variables (http_proxy, https_proxy, no_proxy)
// honoured by libcurl itself.
#pragma once
#include <cstdint>
#include <string>

namespace ciq {

struct HttpSettings {
  long connectTimeoutS = 10;   // CIQ_HTTP_CONNECT_TIMEOUT_S: seconds to connect
  long totalTimeoutS = 600;    // CIQ_HTTP_TIMEOUT_S: seconds for one whole transfer
  long stallTimeoutS = 30;     // CIQ_HTTP_STALL_TIMEOUT_S: seconds with no byte received
  int retries = 3;             // CIQ_HTTP_RETRIES: extra attempts after a transient failure
  long backoffMs = 500;        // CIQ_HTTP_BACKOFF_MS: first wait, doubled each retry
  std::string token;           // GITHUB_TOKEN: sent as a bearer token to the API host
  static HttpSettings fromEnv();
};

struct HttpResponse {
  bool ok = false;
  long status = 0;             // HTTP status of the last attempt, 0 when none arrived
  std::string error;           // one line when !ok: what failed, for which URL
};

// GET `url` into `body`. `accept` is the Accept header.
HttpResponse httpGet(const std::string &url, std::string &body, const HttpSettings &settings,
                     const std::string &accept = "application/vnd.github+json");

// Downloads `url` into `dest + ".part"`; the caller verifies it and renames.
// `expectedBytes` (or -1) lets a short body be reported as a truncated download.
HttpResponse httpDownload(const std::string &url, const std::string &partPath,
                          int64_t expectedBytes, const HttpSettings &settings);

} // namespace ciq
