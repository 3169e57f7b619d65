// `ciq tune` and `ciq resume`: run (or continue) a search and freeze the winner.
#include "engine/commands/Command.h"
#include "common/ConsoleLine.h"
#include "engine/config/Config.h"
#include "common/EnvNames.h"
#include "engine/run/Tune.h"
#include "engine/search/TimeBudget.h"

#include <cstdio>
#include <cstdlib>

using namespace llvm;

namespace ciq {

static std::string joinNames(const std::vector<std::string> &v) {
  std::string out;
  for (const auto &s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Which sections the lock now has, and what this tune replaced (tunes add
// sections, never discard another architecture's).
static void printLockSections(const TuneOutcome &o) {
  if (o.lockReplacedOneWinner)
    printf("lock: replaced the schema-1 lock (one winner for every architecture) with sections\n");
  for (const auto &r : o.lockReplaced)
    printf("lock: section %s replaced: this tune's winner takes the place of the earlier one\n", r.c_str());
  printf("lock sections: %s (written now: %s; an architecture without a section builds with the compiler "
         "defaults)\n",
         joinNames(o.lockSections).c_str(), joinNames(o.lockAdded).c_str());
}

// The summary and the lock line on stdout, the error line on stderr, and the
// exit status: 0 done (lock written or no improvement found), 1 error, 3
// stopped by `ciq stop` (resumable).
int showTuneOutcome(const TuneOutcome &o) {
  if (o.summary) {
    // Through a buffer, so that every line of it is bounded (ConsoleLine.h):
    // a template kernel's name elided, results.csv and `ciq report` whole.
    char *buf = nullptr;
    size_t len = 0;
    if (FILE *mem = open_memstream(&buf, &len)) {
      printSummary(o.summary->config, o.summary->shown, o.summary->winner, mem, o.summary->verdicts);
      fclose(mem);
      fputs(consoleText(std::string(buf, len)).c_str(), stdout);
      free(buf);
    } else {
      printSummary(o.summary->config, o.summary->shown, o.summary->winner, stdout, o.summary->verdicts);
    }
  }
  if (o.lock == TuneOutcome::Lock::Written) {
    printf("lockfile: %s\n", o.lockfile.c_str());
    printLockSections(o);
  }
  else if (o.lock == TuneOutcome::Lock::Unchanged)
    printf("%s left unchanged\n", o.lockfile.c_str());
  else if (o.lock == TuneOutcome::Lock::Absent)
    printf("lockfile not written: nothing beat the default compile, and %s does not exist\n", o.lockfile.c_str());
  switch (o.status) {
  case TuneOutcome::Status::Done:
    return 0;
  case TuneOutcome::Status::Stopped:
    return 3;
  case TuneOutcome::Status::Failed:
    return o.error.empty() ? 1 : reportError(o.error);
  }
  return 1;
}

} // namespace ciq

namespace {

cl::SubCommand TuneCmd("tune", "Search for the best compiler configuration of a target and freeze it in ciq.lock");
cl::SubCommand ResumeCmd("resume", "Continue a search that was stopped or killed, from its journal");

cl::opt<std::string> Config("config", cl::desc("ciq.yaml to read (default: ./ciq.yaml)"), cl::init("ciq.yaml"),
                            cl::sub(TuneCmd), cl::sub(ResumeCmd));
cl::opt<bool> Fresh("fresh", cl::desc("Discard an unfinished earlier search in the run directory"), cl::sub(TuneCmd));
cl::opt<bool> NoCanary("no-canary", cl::desc("Skip the canary build that proves controls reach the compiler"),
                       cl::sub(TuneCmd));
cl::opt<int> MaxEvals("max-evaluations", cl::desc("Stop after this many distinct binaries, the baseline included "
                                                  "(configurations with search.budget_counts: configurations) "
                                                  "(default: $CIQ_MAX_EVALUATIONS, else search.max_evaluations)"),
                      cl::init(0), cl::sub(TuneCmd), cl::sub(ResumeCmd));
cl::opt<std::string> Time("time", cl::desc("A time budget for the whole tune, e.g. 90s, 10m, 1.5h: the search ends "
                                            "early enough for the phases after it (default: search.max_minutes)"),
                          cl::value_desc("duration"), cl::sub(TuneCmd), cl::sub(ResumeCmd));
cl::opt<bool> Quiet("quiet", cl::desc("No line per evaluation"), cl::sub(TuneCmd), cl::sub(ResumeCmd));
cl::opt<bool> Keep("keep", cl::desc("Keep objects and benchmark executables of INVALID candidates for `ciq replay`"),
                    cl::sub(TuneCmd), cl::sub(ResumeCmd));
cl::opt<bool> NoLock("no-lock", cl::desc("Do not write ciq.lock"), cl::sub(TuneCmd), cl::sub(ResumeCmd));

int run(bool resume) {
  // A bad duration is refused before anything is read or started.
  std::optional<double> seconds;
  if (Time.getNumOccurrences() && !(seconds = ciq::parseDuration(Time)))
    return ciq::reportError(ciq::durationError("--time", Time));
  // A budget that is no whole number above 0 is refused, not taken as "unset"
  // (a finished search was started over with the config's budget).
  if (MaxEvals.getNumOccurrences() && MaxEvals < 1)
    return ciq::reportError("--max-evaluations " + std::to_string(MaxEvals) +
                            ": the budget counts binaries, the baseline included; give a whole number of at least 1");
  std::optional<int> envBudget;
  if (const char *env = getenv(ciq::env::MaxEvaluations); env && *env && !MaxEvals.getNumOccurrences()) {
    char *end = nullptr;
    long v = strtol(env, &end, 10);
    if (*end != '\0' || v < 1 || v > 1000000)
      return ciq::reportError(std::string(ciq::env::MaxEvaluations) + "=" + env +
                              ": not a whole number of at least 1 (the budget of ciq tune); unset it or fix it");
    envBudget = (int)v;
  }
  std::string err;
  auto cfg = ciq::openConfig(Config, err);
  if (!cfg)
    return ciq::reportError(err);
  ciq::TuneOptions o;
  o.timeSeconds = seconds.value_or(0);
  if (seconds)
    o.timeText = Time;
  o.resume = resume;
  o.fresh = Fresh;
  o.canary = !NoCanary;
  o.maxEvaluations = MaxEvals;
  // The environment caps a search without editing CMakeLists (CI, quick looks).
  if (envBudget)
    o.maxEvaluations = *envBudget;
  o.quiet = Quiet;
  o.writeLock = !NoLock;
  o.keepInvalid = Keep;
  o.onWarning = ciq::reportWarning;
  return ciq::showTuneOutcome(ciq::runTune(*cfg, o));
}

ciq::RegisterCommand regTune(TuneCmd, [] { return run(false); });
ciq::RegisterCommand regResume(ResumeCmd, [] { return run(true); });

} // namespace
