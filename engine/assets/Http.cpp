#include "engine/assets/Http.h"
#include "engine/assets/HttpRefusal.h"
#include "common/EnvNames.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <curl/curl.h>
#include <mutex>
#include <thread>

namespace ciq {

static long envLong(const char *name, long fallback) {
  const char *v = getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  long n = strtol(v, &end, 10);
  return (end && *end == '\0' && n >= 0) ? n : fallback;
}

HttpSettings HttpSettings::fromEnv() {
  HttpSettings s;
  s.connectTimeoutS = envLong(env::HttpConnectTimeoutS, s.connectTimeoutS);
  s.totalTimeoutS = envLong(env::HttpTimeoutS, s.totalTimeoutS);
  s.stallTimeoutS = envLong(env::HttpStallTimeoutS, s.stallTimeoutS);
  s.retries = (int)envLong(env::HttpRetries, s.retries);
  s.backoffMs = envLong(env::HttpBackoffMs, s.backoffMs);
  if (const char *t = getenv("GITHUB_TOKEN"); t && *t)
    s.token = t;
  return s;
}

namespace {

void initCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t appendToString(char *data, size_t size, size_t n, void *user) {
  static_cast<std::string *>(user)->append(data, size * n);
  return size * n;
}

size_t appendToFile(char *data, size_t size, size_t n, void *user) {
  if (!user)
    return 0;   // the .part file could not be opened: abort the transfer
  return fwrite(data, size, n, static_cast<FILE *>(user)) * size;
}

// A failure worth another attempt: the network, the server being busy, a
// transfer cut short. A 404 or a refused request will not change by retrying.
bool transient(CURLcode code, long status) {
  if (code == CURLE_OK)
    return status >= 500; // 429 is said as such (permanentRefusal)
  switch (code) {
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_PARTIAL_FILE:
  case CURLE_RECV_ERROR:
  case CURLE_SEND_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
    return true;
  default:
    return false;
  }
}

std::string describe(CURLcode code, long status, const HttpSettings &s, const char *errbuf) {
  if (code == CURLE_OPERATION_TIMEDOUT)
    return "timed out (connect limit " + std::to_string(s.connectTimeoutS) + " s, total " +
           std::to_string(s.totalTimeoutS) + " s, stall " + std::to_string(s.stallTimeoutS) +
           " s; CIQ_HTTP_*_TIMEOUT_S change them)";
  if (code == CURLE_PARTIAL_FILE)
    return "truncated download: the server closed the connection before the whole file arrived";
  if (code != CURLE_OK)
    return std::string(*errbuf ? errbuf : curl_easy_strerror(code));
  return "HTTP " + std::to_string(status) + (status == 404 ? " Not Found" : "");
}

// What the last attempt's answer says beyond its status: a proxy's answer to
// CONNECT and GitHub's rate-limit headers (libcurl's own header API).
HttpAnswer answerOf(CURL *h, const std::string &url, long status) {
  HttpAnswer a;
  a.url = url;
  a.status = status;
  curl_easy_getinfo(h, CURLINFO_HTTP_CONNECTCODE, &a.connectStatus);
  auto header = [&](const char *name) {
    struct curl_header *hd = nullptr;
    return curl_easy_header(h, name, 0, CURLH_HEADER, -1, &hd) == CURLHE_OK && hd ? std::string(hd->value)
                                                                                   : std::string();
  };
  a.rateRemaining = header("x-ratelimit-remaining");
  a.rateReset = header("x-ratelimit-reset");
  a.retryAfter = header("retry-after");
  return a;
}

// One transfer with retries. `prepare` resets the sink before each attempt.
template <typename Prepare>
HttpResponse transfer(const std::string &url, const std::string &accept, const HttpSettings &s,
                      int64_t expectedBytes, Prepare prepare) {
  initCurlOnce();
  HttpResponse r;
  for (int attempt = 0;; ++attempt) {
    CURL *h = curl_easy_init();
    if (!h) {
      r.error = "cannot start libcurl for " + url;
      return r;
    }
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_slist *headers = nullptr;
    headers = curl_slist_append(headers, ("Accept: " + accept).c_str());
    if (!s.token.empty() && accept.find("github") != std::string::npos)
      headers = curl_slist_append(headers, ("Authorization: Bearer " + s.token).c_str());
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "ciq (https://github.com/NVIDIA/CompileIQ)");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, s.connectTimeoutS);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, s.totalTimeoutS);
    // A stalled server: less than 1 byte/s for stallTimeoutS seconds.
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, s.stallTimeoutS);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https,file");
    prepare(h);
    CURLcode code = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t got = 0;
    curl_easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &got);
    HttpAnswer answer = answerOf(h, url, status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);

    r.status = status;
    bool httpOk = code == CURLE_OK && (status == 0 || (status >= 200 && status < 300));
    // A body shorter than the asset is a size mismatch the caller reports;
    // a connection cut before the server's own Content-Length is
    // CURLE_PARTIAL_FILE (truncated), and worth a retry.
    bool shortBody = false;
    if (httpOk) {
      r.ok = true;
      r.error.clear();
      return r;
    }
    // A proxy that wants credentials, a rate limit spent for half an hour:
    // said as such, and not retried.
    if (auto refused = permanentRefusal(answer, (int64_t)time(nullptr))) {
      r.error = *refused;
      return r;
    }
    if (shortBody)
      r.error = "truncated download of " + url + ": received " + std::to_string((long long)got) +
                " of " + std::to_string((long long)expectedBytes) + " bytes";
    else
      r.error = "cannot download " + url + ": " + describe(code, status, s, errbuf);
    if (!(shortBody || transient(code, status)) || attempt >= s.retries) {
      if (attempt > 0)
        r.error += " (after " + std::to_string(attempt + 1) + " attempts)";
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(s.backoffMs << attempt));
  }
}

} // namespace

HttpResponse httpGet(const std::string &url, std::string &body, const HttpSettings &settings,
                     const std::string &accept) {
  return transfer(url, accept, settings, -1, [&](CURL *h) {
    body.clear();
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, appendToString);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
  });
}

HttpResponse httpDownload(const std::string &url, const std::string &partPath,
                          int64_t expectedBytes, const HttpSettings &settings) {
  FILE *f = nullptr;
  HttpResponse r = transfer(url, "application/octet-stream", settings, expectedBytes, [&](CURL *h) {
    if (f)
      fclose(f);
    f = fopen(partPath.c_str(), "wb");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, appendToFile);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
  });
  if (!f) {
    r.ok = false;
    r.error = "cannot write " + partPath + ": " + strerror(errno) + "; check the cache folder's permissions";
    return r;
  }
  if (fclose(f) != 0 && r.ok) {
    r.ok = false;
    r.error = "cannot write " + partPath + ": " + strerror(errno);
  }
  if (!r.ok)
    remove(partPath.c_str());
  return r;
}

} // namespace ciq
