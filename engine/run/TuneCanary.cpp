#include "engine/run/TuneRun.h"

namespace ciq {

// The proof that controls reach the compiler: a deliberately degrading
// configuration must change the device code (and, with a benchmark, should
// regress the score).
bool TuneRun::runCanary() {
  if (!opts_.canaryOnly) {
    if (!cfg_.search.canary || (opts_.resume && canaryDone_))
      return true;
    if (!opts_.canary) { // --no-canary: recorded, so that a resume does not run it either
      return opts_.resume || journal({{"op", "canary"}, {"skipped", true}});
    }
  }
  Evaluation c;
  c.candidateId = "canary";
  if (opts_.canaryAcf.empty())
    c.rendered.ptxas = {"--opt-level=0"};
  else {
    auto h = sha256File(opts_.canaryAcf);
    if (!h)
      return fail("canary: cannot read ACF " + opts_.canaryAcf);
    c.rendered.acfs.push_back({opts_.canaryAcfStage, opts_.canaryAcf, *h});
  }
  c.candidateHash = c.rendered.hash();
  std::string what = c.rendered.summary();
  progress_.building("canary");
  builder().build(c, logPath("canary"));
  if (c.reason == reason::DiskFault || c.reason == reason::SocketReplaced)
    return fail("canary: " + c.message + "; nothing was recorded for it: continue with `ciq resume --config " +
                shellQuote(cfg_.path) + "`");
  const Evaluation &b = evals_.front();
  // A changed hash proves nothing where ptxas did not run at compile time
  // (-dlto: the device code is LTO IR, SASS is made at the device link).
  for (const Evaluation *e : std::initializer_list<const Evaluation *>{&b, &c})
    for (const auto &o : e->objects)
      if (!o.ptxasRan) {
        if (!journal({{"op", "canary"}, {"ok", false}, {"reason", reason::NotMeasurable}}))
          return false;
        return fail("canary: ptxas did not run when " + o.source +
                           " was compiled (-dlto or no SASS target: ptxas runs at the device link, which "
                           "ciq-ptxas does not wrap), so ptxas controls do not reach the compiler here; compile "
                           "SASS for the tuned architecture (drop -dlto while tuning)");
      }
  // Kernels compiled at run time exist only once the benchmark ran.
  bool measured = c.ok && compilesAtRunTime() && bench();
  if (measured) {
    scoreCompileMetrics(cfg_, c);
    measureCandidate(*workers_[0], c);
  }
  bool changed = c.ok && c.deviceCodeSha256 != b.deviceCodeSha256;
  if (changed && bench() && opts_.canaryOnly) {
    if (!measured) {
      scoreCompileMetrics(cfg_, c);
      measureCandidate(*workers_[0], c);
    }
    std::string metric = cfg_.objectives.front().metric;
    if (c.ok && c.scores.count(metric) && b.scores.count(metric) &&
        normalizedObjectives(cfg_, c) <= normalizedObjectives(cfg_, b))
      warn("canary: " + what + " changed the device code but did not regress " + metric + " (" +
                    fmt::value(b.scores.at(metric)) + " -> " + fmt::value(c.scores.at(metric)) +
                    "): does the benchmark time the tuned kernels? is the measurement noisy (CV%)?");
  }
  if (!journal({{"op", "canary"}, {"ok", changed}, {"device_code_sha256", c.deviceCodeSha256},
                {"baseline_device_code_sha256", b.deviceCodeSha256}, {"reason", c.reason}}))
    return false;
  if (changed) {
    progress_.note("canary: " + what + " changed the device code (" + b.deviceCodeSha256.substr(0, 12) + " -> " +
                   c.deviceCodeSha256.substr(0, 12) + "): controls reach the compiler");
    return true;
  }
  if (!c.ok && c.reason != reason::StaleBuild) {
    warn("canary: the degrading build failed (" + c.reason + ": " + c.message + "), so it proves nothing");
    return !opts_.canaryOnly;
  }
  if (std::string none = noDeviceCodeReason(cfg_, b); c.ok && !none.empty())
    return fail("canary: " + none);
  fail("canary: " +
              (c.ok ? what + " produced the same device code (" + b.deviceCodeSha256.substr(0, 12) +
                          ") as the default compile"
                    : c.message) +
              "; the configuration did not reach the compiler: a compiler cache, stale objects or a missing "
              "launcher hide it (docs/troubleshooting.md); search.canary: false skips this check");
  return false;
}

} // namespace ciq
