// ciq-run-fixture JOURNAL OUTDIR: rewrites a recorded run through the
// engine's own reader and writers, so that the analysis tests read files in
// exactly the schema a search writes (engine/record/), never a
// hand-written one that can drift from it.
//
// The journal is read with readJournal (the start line and every evaluation
// line typed; keys the engine does not know are dropped and the writer's
// keys it lacks get their defaults), its start line supplies the objectives,
// the Pareto column is the engine's markFront, and OUTDIR gets journal.jsonl
// (Journal::append, checksums included) and results.csv (writeResultsCsv).
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"
#include "engine/record/Journal.h"
#include "engine/run/ResultsCsv.h"
#include "engine/winner/Winner.h"

#include <cstdio>
#include <llvm/Support/FileSystem.h>

using namespace ciq;

namespace {

int fail(const std::string &message) {
  fprintf(stderr, "ciq-run-fixture: error: %s\n", message.c_str());
  return 1;
}

// The objectives of the start line (typed by readJournal), as the search had
// them in its ciq.yaml. The start line does not record `pareto:`; several
// objectives are taken as a front (as with `pareto: true`), which is what
// the fixture's results.csv was written with.
bool objectivesOf(const RecordedStart &start, TuneConfig &cfg, std::string &error) {
  for (const auto &o : start.objectives) {
    Objective obj;
    obj.metric = o.metric;
    obj.direction = o.direction;
    obj.unit = o.unit;
    cfg.objectives.push_back(obj);
  }
  cfg.pareto = cfg.objectives.size() > 1;
  if (cfg.objectives.empty())
    return error = "the start line names no objectives", false;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3)
    return fail("usage: ciq-run-fixture JOURNAL OUTDIR");
  std::string in = argv[1], outDir = argv[2];
  JournalContents run = readJournal(in);
  if (!run.damaged.empty())
    return fail(run.damaged.front());
  if (!run.started)
    return fail(in + ": no start line");
  TuneConfig cfg;
  std::string error;
  if (!objectivesOf(*run.started, cfg, error))
    return fail(in + ": " + error);
  llvm::sys::fs::create_directories(outDir);
  std::string journalPath = outDir + "/journal.jsonl";
  llvm::sys::fs::remove(journalPath);
  Journal journal;
  if (!journal.open(journalPath, error))
    return fail(error);
  journal.append(startToJson(*run.started));
  markFront(cfg, run.evaluations);
  for (const auto &e : run.evaluations)
    journal.append(evaluationToJson(e));
  for (int g : run.completedGenerations)
    journal.append({{"op", "generation"}, {"generation", g}});
  if (!writeResultsCsv(outDir + "/results.csv", cfg, run.evaluations, error))
    return fail(error);
  return 0;
}
