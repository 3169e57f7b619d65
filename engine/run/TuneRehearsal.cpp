// The rehearsal of the winner between minimization and attribution
// (engine/winner/Rehearsal.h): the lock's own build, before the lock exists.
// A winner whose rehearsal fails is INVALID (rehearsal_failed): a minimized
// winner gives way to the winner as searched, a searched one to the next
// best candidate, whose finalists and minimization run again. Each rehearsal
// is journaled as it ends, so `ciq resume` repeats none.
#include "engine/run/TuneRun.h"
#include "engine/winner/Rehearsal.h"
#include "engine/compile/ProgramIdentity.h"

namespace ciq {

namespace {

// How many winners may fail their rehearsal before the tune gives up on a lock.
constexpr int kMostRehearsals = 3;

std::string seconds(double ms) { return fmt::value(ms / 1000.0) + " s"; }

} // namespace

// A rehearsal journaled for the same rendering (this run, or one before a
// resume; nullptr: none): the same lock, so the same build.
const RehearsalRecord *TuneRun::knownRehearsal(const std::string &candidateHash) const {
  for (auto it = rehearsals_.rbegin(); it != rehearsals_.rend(); ++it)
    if (it->candidateHash == candidateHash)
      return &*it;
  return nullptr;
}

// Rehearses `win` (or takes the journal's word for it); false only when the
// search must stop (a disk fault, a journal that cannot be written).
bool TuneRun::rehearseOne(const Evaluation &win, RehearsalRecord &rec) {
  if (const RehearsalRecord *prior = knownRehearsal(win.candidateHash);
      prior && (!prior->ok || !runtimeObjective() || !prior->snapshot.empty())) {
    rec = *prior;
    progress_.note("rehearsal: " + win.candidateId + " was rehearsed already" +
                   (prior->candidateId == win.candidateId ? "" : " (as " + prior->candidateId + ", the same lock)") +
                   ": " + (rec.ok ? std::string("its build matched") : "INVALID " + rec.reason) + ", not built again");
    return true;
  }
  progress_.note("rehearsal: building " + win.candidateId + " as its lock will build it (ciq-ptxas --lock, every "
                 "object assembled, device link and link)");
  Rehearsal r = rehearseWinner(builder(), cfg_, evals_.front(), win, runtimeObjective());
  if (r.reason == reason::DiskFault)
    return fail("rehearsal: " + r.message + "; no lock is written; " + resumeHint());
  rec = RehearsalRecord{win.candidateId, win.candidateHash, r.ok, r.reason, r.message, r.buildMs,
                        r.snapshot.value_or(std::vector<std::string>{}), r.sections};
  rehearsals_.push_back(rec);
  return journal(rehearsalToJson(rec));
}

bool TuneRun::rehearse(WinnerChoice &w) {
  // Nothing is built ahead of the run (kernels compiled at run time): the
  // lock applies then, through `ciq lock env`.
  if (!w.improved || w.index <= 0 || !opts_.writeLock || cfg_.build.kind == "none")
    return true;
  // Winners whose rehearsal failed before a resume count towards the limit.
  int failed = (int)std::count_if(evals_.begin(), evals_.end(),
                                  [](const Evaluation &e) { return e.reason == reason::RehearsalFailed; });
  for (;;) {
    bool minimizedWinner = !minimized_.candidateId.empty();
    const Evaluation &win = minimizedWinner ? minimized_ : evals_[w.index];
    RehearsalRecord rec;
    if (!rehearseOne(win, rec))
      return false;
    if (rec.ok) {
      rehearsalMs_ += rec.buildMs;
      verdicts_.rehearsal.push_back(win.candidateId + " built as its lock builds it (ciq-ptxas --lock, every object "
                                    "assembled and linked) in " + seconds(rec.buildMs) +
                                    ": device code matches the tuned build");
      if (!rec.snapshot.empty()) {
        notePrograms(win, rec);
        snapshots_[win.rendered.hash()] = rec.snapshot;   // the winner's last measurement runs this build
      }
      lockExtra_["rehearsal"] = {{"candidate_id", win.candidateId}, {"build_ms", rec.buildMs},
                                 {"route", "ciq-ptxas --lock"}};
      if (rec.sections.is_object() && !rec.sections.empty())
        lockExtra_["device_code_sections"] = rec.sections;
      return true;
    }
    std::string line = win.candidateId + " INVALID " + rec.reason + ": " + rec.message;
    progress_.note("rehearsal: " + line);
    verdicts_.rehearsal.push_back(line);
    if (minimizedWinner) {
      // The winner as searched, with every control it was measured with.
      minimized_ = Evaluation{};
      lockExtra_.erase("minimization");
      continue;
    }
    Evaluation &bad = evals_[w.index];
    bad.ok = false;
    bad.reason = rec.reason;
    bad.message = rec.message;
    if (!writeResults())
      return false;
    if (++failed >= kMostRehearsals) {
      w.index = 0;   // the summary shows no rehearsed-out candidate as the best
      w.improved = false;
      w.why = std::to_string(failed) + " winners failed their rehearsal (the build the lock makes); the last: " +
              rec.message;
      return true;
    }
    w = chooseWinner(cfg_, evals_);
    if (!w.improved || w.index <= 0) {
      w.why = "the winner failed its rehearsal and no other candidate beat the default compile";
      w.improved = false;
      return true;
    }
    progress_.note("rehearsal: the next best candidate is " + evals_[w.index].candidateId);
    verdicts_.minimization.clear();
    if (!runFinalists(w) || !minimize(w))
      return false;
    if (!w.improved)
      return true;
  }
}

// A resumed search: candidates whose rehearsal failed before are INVALID again.
void TuneRun::applyPriorRehearsals() {
  for (const auto &r : rehearsals_)
    if (!r.ok)
      for (auto &e : evals_)
        if (e.candidateHash == r.candidateHash && e.candidateId == r.candidateId) {
          e.ok = false;
          e.reason = r.reason;
          e.message = r.message;
        }
}

// The runtime verdict is taken on what the lock builds (issue 56 item 2):
// the copy of the program the finalists measured is compared with the
// program the rehearsal built, byte for byte, host code included. Identical,
// the finalists' runs are the rehearsed program's; else the winner's runs
// are not reused and the attribution measures the rehearsed program against
// the baseline (its last row is the verdict the lock is written on).
void TuneRun::notePrograms(const Evaluation &win, const RehearsalRecord &rec) {
  auto measured = snapshots_.find(win.rendered.hash());
  std::string copy = measured == snapshots_.end() ? "" : copyFolderOf(measured->second, cfg_.runDir + "/programs");
  std::string rehearsed = cfg_.runDir + "/rehearsal/" + rec.candidateId + "/program";
  if (copy.empty()) {
    verdicts_.rehearsal.push_back("the verdict is measured on the rehearsed program (" + rehearsed +
                                  "): the finalists did not run a copy of this build");
    lockExtra_["verdict_program"] = {{"measured", "rehearsed"}};
    remeasure_.insert(win.rendered.hash());
    return;
  }
  ProgramComparison c = compareProgramCopies(copy, rehearsed);
  if (c.identical && c.loadedOnly.empty()) {
    verdicts_.rehearsal.push_back("the program the finalists measured (" + copy + ") and the rehearsed one are "
                                  "byte-identical, host code included: the verdict is the lock's build's");
    lockExtra_["verdict_program"] = {{"measured", "search copy"}, {"identical_to_rehearsed", true}};
    return;
  }
  if (c.identical) {
    std::string files;
    for (const auto &f : c.loadedOnly)
      files += (files.empty() ? "" : ", ") + f;
    verdicts_.rehearsal.push_back("the program the finalists measured (" + copy + ") and the rehearsed one load the "
                                  "same bytes: host code identical, device code as the rehearsal proved it (" +
                                  files + (c.loadedOnly.size() == 1 ? ": differs" : ": differ") +
                                  " only in sections not loaded and the build-id, nvcc's temporary names); the "
                                  "verdict is the lock's build's");
    lockExtra_["verdict_program"] = {{"measured", "search copy"}, {"identical_to_rehearsed", true},
                                     {"identical_loaded_sections_only", c.loadedOnly}};
    return;
  }
  verdicts_.rehearsal.push_back("the rehearsed program differs from the copy the finalists measured (" +
                                c.difference + "): the verdict is measured again on the rehearsed program");
  lockExtra_["verdict_program"] = {{"measured", "rehearsed"}, {"identical_to_rehearsed", false},
                                   {"difference", c.difference}};
  remeasure_.insert(win.rendered.hash());
}

} // namespace ciq
