// The model of a recorded run (engine/record/): the journal's one writer
// (evaluationToJson, Journal::append) and its one reader (evaluationFromJson,
// readJournal), which the engine (resume, replay) and the analysis commands
// (loadRun) both read through; and results.csv's writer and reader, which
// meet in its column table.
#include "sample_kernel.h"
#include "engine/config/Config.h"
#include "engine/run/ResultsCsv.h"
#include "engine/analysis/RunData.h"
#include "engine/record/Evaluation.h"
#include "engine/record/Journal.h"

#include <fstream>
#include <gtest/gtest.h>

#include <cmath>
#include <llvm/Support/FileSystem.h>

using namespace ciq;
using nlohmann::json;

namespace {

class RecordDir : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> p;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-record", p));
    dir = std::string(p);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string write(const std::string &name, const std::string &text) {
    std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // journal.jsonl with these lines, checksummed as Journal::append writes them.
  std::string writeJournal(const std::vector<json> &lines) {
    std::string text;
    for (const auto &l : lines)
      text += journalLineText(l) + "\n";
    return write("journal.jsonl", text);
  }
  std::string dir;
};

// Every member set to something other than its default, so that a member the
// writer drops or the reader skips reads back different.
Evaluation everyField() {
  Evaluation e;
  e.candidateId = "c0042";
  e.generation = 3;
  e.point = {2, kUnset, 0};
  e.rendered.ptxas = {"--opt-level=2"};
  e.rendered.nvcc = {"--extra-device-vectorization"};
  e.rendered.defines = {"TILE=16"};
  e.rendered.acfs = {{"ptxas", "/src/k.acf", "ab12"}};
  e.rendered.controls = {{"opt-level", "2"}, {"tile", "16"}};
  e.candidateHash = "hash42";
  e.ok = true;
  e.reason = "run_timeout";   // with ok = true only to see it travel
  e.message = "one line: see logs/c0042.log";
  e.scores = {{"time_ms", 1.25}, {"registers", 40}};
  e.deviceCodeSha256 = "dev42";
  e.objectsSha256 = "obj42";
  e.duplicateOf = "c0007";
  e.duplicateKind = "device_code";
  KernelStats k = ciq::test::sampleKernel(40, 8, 4, 16);
  k.barriers = 1;
  k.sharedBytes = 4096;
  k.constantBytes = 380;
  k.entry = false;
  k.frameKnown = true;
  k.usageKnown = true;
  k.capApplied = true;
  k.capOverride = "255";
  e.kernels = {k};
  ObjectRecord o;
  o.source = "k.cu";
  o.output = "k.o";
  o.deviceCodeSha256 = "dev-k";
  o.status = "ok";
  o.deviceCodeBytes = 9000;
  o.wallMs = 12.5;
  o.ptxasRan = false;
  o.ptxReuse = "reused";
  o.cached = true;
  o.directiveKernels = {{"_Z4stepPf", {"sm_80", "sm_90"}}};
  e.objects = {o};
  e.runtimeKernels = {"triton_kernel"};
  e.runs = {1.2, 1.3, 1.25};
  e.cvPercent = 2.5;
  e.noisePercent = 0.75;
  e.stoppedBy = "max_repeats";
  e.runsSaved = 4;
  e.gpuProblems = {"throttled: thermal"};
  e.smClockMhz = {1980, 1755};
  e.kernelTimes.resize(1);
  e.kernelTimes[0].mangled = "_Z4stepPf\xff"; // not UTF-8: a byte string
  e.kernelTimes[0].demangled = "step(float*)";
  e.kernelTimes[0].launches = 4;
  e.kernelTimes[0].gpuMs = 1.25;
  e.buildMs = 1200;
  e.measureMs = 800;
  e.log = "logs/c0042.log";
  e.replay = "cd /b && ninja k.o";
  e.evaluatedAt = "2025-01-01T00:00:00Z";
  e.node = "gpu-node-7";
  e.gpu = {{"sm_clock_mhz", 1980}};
  e.slurm = {{"job", "123"}};
  CaseResult c;
  c.name = "small";
  c.runs = {1.0, 1.1};
  c.median = 1.05;
  c.cvPercent = 3;
  c.noisePercent = 2;
  c.stoppedBy = "target";
  c.runsSaved = 1;
  c.ratio = 0.9;
  c.pValue = 0.004;
  e.cases = {c};
  return e;
}

void expectSame(const Evaluation &a, const Evaluation &b) {
  EXPECT_EQ(a.candidateId, b.candidateId);
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.point, b.point);
  EXPECT_EQ(a.rendered.ptxas, b.rendered.ptxas);
  EXPECT_EQ(a.rendered.nvcc, b.rendered.nvcc);
  EXPECT_EQ(a.rendered.defines, b.rendered.defines);
  ASSERT_EQ(a.rendered.acfs.size(), b.rendered.acfs.size());
  for (size_t i = 0; i < a.rendered.acfs.size(); ++i) {
    EXPECT_EQ(a.rendered.acfs[i].stage, b.rendered.acfs[i].stage);
    EXPECT_EQ(a.rendered.acfs[i].path, b.rendered.acfs[i].path);
    EXPECT_EQ(a.rendered.acfs[i].sha256, b.rendered.acfs[i].sha256);
  }
  EXPECT_EQ(a.rendered.controls, b.rendered.controls);
  EXPECT_EQ(a.candidateHash, b.candidateHash);
  EXPECT_EQ(a.ok, b.ok);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.scores, b.scores);
  EXPECT_EQ(a.deviceCodeSha256, b.deviceCodeSha256);
  EXPECT_EQ(a.objectsSha256, b.objectsSha256);
  EXPECT_EQ(a.duplicateOf, b.duplicateOf);
  EXPECT_EQ(a.duplicateKind, b.duplicateKind);
  EXPECT_EQ(json(a.kernels), json(b.kernels));   // KernelStats' own JSON form (common/Protocol.h)
  ASSERT_EQ(a.objects.size(), b.objects.size());
  for (size_t i = 0; i < a.objects.size(); ++i) {
    const ObjectRecord &x = a.objects[i], &y = b.objects[i];
    EXPECT_EQ(x.source, y.source);
    EXPECT_EQ(x.output, y.output);
    EXPECT_EQ(x.deviceCodeSha256, y.deviceCodeSha256);
    EXPECT_EQ(x.status, y.status);
    EXPECT_EQ(x.deviceCodeBytes, y.deviceCodeBytes);
    EXPECT_EQ(x.wallMs, y.wallMs);
    EXPECT_EQ(x.ptxasRan, y.ptxasRan);
    EXPECT_EQ(x.ptxReuse, y.ptxReuse);
    EXPECT_EQ(x.cached, y.cached);
    EXPECT_EQ(x.directiveKernels, y.directiveKernels);
  }
  EXPECT_EQ(a.runtimeKernels, b.runtimeKernels);
  EXPECT_EQ(a.runs, b.runs);
  EXPECT_EQ(a.cvPercent, b.cvPercent);
  EXPECT_EQ(a.noisePercent, b.noisePercent);
  EXPECT_EQ(a.stoppedBy, b.stoppedBy);
  EXPECT_EQ(a.runsSaved, b.runsSaved);
  EXPECT_EQ(a.gpuProblems, b.gpuProblems);
  EXPECT_EQ(a.smClockMhz, b.smClockMhz);
  EXPECT_EQ(a.kernelTimes, b.kernelTimes);
  EXPECT_EQ(a.buildMs, b.buildMs);
  EXPECT_EQ(a.measureMs, b.measureMs);
  EXPECT_EQ(a.log, b.log);
  EXPECT_EQ(a.replay, b.replay);
  EXPECT_EQ(a.evaluatedAt, b.evaluatedAt);
  EXPECT_EQ(a.node, b.node);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.slurm, b.slurm);
  ASSERT_EQ(a.cases.size(), b.cases.size());
  for (size_t i = 0; i < a.cases.size(); ++i) {
    EXPECT_EQ(a.cases[i].name, b.cases[i].name);
    EXPECT_EQ(a.cases[i].runs, b.cases[i].runs);
    EXPECT_EQ(a.cases[i].median, b.cases[i].median);
    EXPECT_EQ(a.cases[i].cvPercent, b.cases[i].cvPercent);
    EXPECT_EQ(a.cases[i].noisePercent, b.cases[i].noisePercent);
    EXPECT_EQ(a.cases[i].stoppedBy, b.cases[i].stoppedBy);
    EXPECT_EQ(a.cases[i].runsSaved, b.cases[i].runsSaved);
    EXPECT_EQ(a.cases[i].ratio, b.cases[i].ratio);
    EXPECT_EQ(a.cases[i].pValue, b.cases[i].pValue);
  }
}

// A start line with every member set, as the writer makes it.
RecordedStart everyStart() {
  RecordedStart s;
  s.version = 2;
  s.engineVersion = "9.9.9";
  s.configPath = "/b/ciq.yaml";
  s.spaceIdentity = "identity";
  s.spaceSize = 5000;
  s.seed = 7;
  s.strategy = "tpe";
  s.search = {"tpe", 4, 6, 2, 1, 0.25, 7, 1};
  s.target = "app";
  s.objectives = {{"time_ms", "maximize", "GB/s"}, {"registers", "minimize", "registers"}};
  s.pareto = true;   // not the default, so the round trip proves it is read
  s.startedAt = "2025-01-01T00:00:00Z";
  s.measurement = {{"repeats", "adaptive"}, {"target_noise_percent", 0.5}};
  s.targetNoisePercent = 0.5;
  return s;
}

json startLine() { return startToJson(everyStart()); }

} // namespace

// Writer -> file -> reader gives back every member.
TEST_F(RecordDir, EveryEvaluationFieldRoundTrips) {
  Evaluation e = everyField();
  std::string path = dir + "/journal.jsonl";
  {
    Journal j;
    std::string error;
    ASSERT_TRUE(j.open(path, error)) << error;
    ASSERT_TRUE(j.append(startLine()));
    ASSERT_TRUE(j.append(evaluationToJson(e)));
    ASSERT_TRUE(j.append(buildToJson(e)));
  }
  JournalContents c = readJournal(path);
  ASSERT_TRUE(c.damaged.empty()) << c.damaged.front();
  ASSERT_EQ(c.evaluations.size(), 1u);
  expectSame(e, c.evaluations[0]);
  ASSERT_EQ(c.builds.size(), 1u);
  expectSame(e, c.builds[0]);
  EXPECT_EQ(c.nextId, 43);
  ASSERT_TRUE(c.started);
  RecordedStart a = everyStart(), &b = *c.started;
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.engineVersion, b.engineVersion);
  EXPECT_EQ(a.configPath, b.configPath);
  EXPECT_EQ(a.spaceIdentity, b.spaceIdentity);
  EXPECT_EQ(a.spaceSize, b.spaceSize);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.strategy, b.strategy);
  EXPECT_EQ(a.search.strategy, b.search.strategy);
  EXPECT_EQ(a.search.poolSize, b.search.poolSize);
  EXPECT_EQ(a.search.generations, b.search.generations);
  EXPECT_EQ(a.search.cullSize, b.search.cullSize);
  EXPECT_EQ(a.search.elitism, b.search.elitism);
  EXPECT_EQ(a.search.mutateRate, b.search.mutateRate);
  EXPECT_EQ(a.search.seed, b.search.seed);
  EXPECT_EQ(a.search.proposeAhead, b.search.proposeAhead);
  EXPECT_EQ(a.target, b.target);
  ASSERT_EQ(b.objectives.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.objectives[i].metric, b.objectives[i].metric);
    EXPECT_EQ(a.objectives[i].direction, b.objectives[i].direction);
    EXPECT_EQ(a.objectives[i].unit, b.objectives[i].unit);
  }
  EXPECT_EQ(a.pareto, b.pareto);
  EXPECT_EQ(a.startedAt, b.startedAt);
  EXPECT_EQ(a.measurement, b.measurement);
  EXPECT_EQ(a.targetNoisePercent, b.targetNoisePercent);
}

// Every member the writer puts in a line is one the reader reads back as
// written (everyField sets each to something other than its default): a
// member the writer renames, or one the reader skips, breaks here.
TEST(Record, TheReaderReadsEveryMemberTheWriterWrites) {
  json full = evaluationToJson(everyField());
  Evaluation e;
  std::string error;
  ASSERT_TRUE(evaluationFromJson(full, e, error, "line")) << error;
  json again = evaluationToJson(e);
  for (auto it = full.begin(); it != full.end(); ++it)
    EXPECT_EQ(again.value(it.key(), json()), *it) << "the reader does not read \"" << it.key() << "\" back";
  EXPECT_EQ(again.size(), full.size());
}

// The same for the start line, nested "search" members included.
TEST(Record, TheReaderReadsEveryStartMemberTheWriterWrites) {
  json full = startLine();
  RecordedStart s;
  std::string error;
  ASSERT_TRUE(startFromJson(full, s, error, "line")) << error;
  json again = startToJson(s);
  EXPECT_EQ(again, full);
  for (auto it = full["search"].begin(); it != full["search"].end(); ++it)
    EXPECT_NE(*it, startToJson(RecordedStart())["search"][it.key()]) << "\"search\": \"" << it.key() << "\" is left at its default";
  for (auto it = full.begin(); it != full.end(); ++it)
    if (it.key() != "op" && it.key() != "search") {
      EXPECT_NE(*it, startToJson(RecordedStart())[it.key()]) << "\"" << it.key() << "\" is left at its default";
    }
}

// A field of the wrong type is one damaged line naming it; the rest is kept.
TEST(Record, AWrongTypeNamesTheLineAndKey) {
  json line = evaluationToJson(everyField());
  line["runs"] = "many";
  Evaluation e;
  std::string error;
  EXPECT_FALSE(evaluationFromJson(line, e, error, "journal.jsonl:2"));
  EXPECT_EQ(error, "journal.jsonl:2: \"runs\": expected an array, found a string");
  line = evaluationToJson(everyField());
  line["objects"][0]["device_code_bytes"] = "9000";
  EXPECT_FALSE(evaluationFromJson(line, e, error, "journal.jsonl:2"));
  EXPECT_NE(error.find("\"objects\"[0]: \"device_code_bytes\": expected an integer"), std::string::npos) << error;
}

// A last line cut short by a kill is no record and no damage; the writer
// cuts it off before its next line, so the journal reads on.
TEST_F(RecordDir, ATornLastLineIsNoRecord) {
  Evaluation a = everyField(), b = everyField();
  b.candidateId = "c0043";
  std::string whole = journalLineText(startLine()) + "\n" + journalLineText(evaluationToJson(a)) + "\n";
  std::string torn = journalLineText(evaluationToJson(b));
  std::string path = write("journal.jsonl", whole + torn.substr(0, torn.size() / 2));
  JournalContents c = readJournal(path);
  EXPECT_TRUE(c.damaged.empty()) << c.damaged.front();
  ASSERT_EQ(c.evaluations.size(), 1u);
  EXPECT_EQ(c.evaluations[0].candidateId, "c0042");
  {
    Journal j;
    std::string error;
    ASSERT_TRUE(j.open(path, error)) << error;
    ASSERT_TRUE(j.append(evaluationToJson(b)));
  }
  c = readJournal(path);
  EXPECT_TRUE(c.damaged.empty()) << c.damaged.front();
  ASSERT_EQ(c.evaluations.size(), 2u);
  EXPECT_EQ(c.evaluations[1].candidateId, "c0043");
  // The analysis commands read the same run through the same reader.
  std::string error;
  auto run = loadRun(path, error);
  ASSERT_TRUE(run) << error;
  ASSERT_EQ(run->evals.size(), 2u);
  ASSERT_TRUE(run->evals[1].journal);
  expectSame(b, *run->evals[1].journal);
}

// A line of an op this ciq does not know (a later version's) is skipped,
// not damage: the lines around it are read.
TEST_F(RecordDir, AnUnknownLineTypeIsSkipped) {
  std::string path = writeJournal({startLine(),
                                   {{"op", "from_a_later_ciq"}, {"candidate_id", 5}},
                                   evaluationToJson(everyField()),
                                   {{"op", "attribution"}, {"rows", {{{"name", "both"}}}}},
                                   {{"op", "minimize"}, {"steps", {{{"removed", "control o"}}}}}});
  JournalContents c = readJournal(path);
  EXPECT_TRUE(c.damaged.empty()) << c.damaged.front();
  ASSERT_EQ(c.evaluations.size(), 1u);
  ASSERT_EQ(c.attribution.size(), 1u);
  EXPECT_EQ(c.attribution[0].name, "both");
  ASSERT_EQ(c.minimization.size(), 1u);
  EXPECT_EQ(c.minimization[0].removed, "control o");
  std::string error;
  auto run = loadRun(path, error);
  ASSERT_TRUE(run) << error;
  EXPECT_EQ(run->evals.size(), 1u);
  ASSERT_EQ(run->attribution.size(), 1u);
  EXPECT_EQ(run->minimization.size(), 1u);
}

// The analysis model of a journal-only run: the cells results.csv would
// hold, derived from the typed evaluation and the start line's objectives.
TEST_F(RecordDir, AnalysisReadsTheTypedEvaluation) {
  Evaluation base = everyField(), cand = everyField();
  base.candidateId = "c0000";
  base.generation = 0;
  cand.duplicateKind = cand.duplicateOf = "";
  std::string path = writeJournal({startLine(), evaluationToJson(base), evaluationToJson(cand)});
  std::string error;
  auto run = loadRun(path, error);
  ASSERT_TRUE(run) << error;
  EXPECT_EQ(run->direction, "maximize");
  EXPECT_TRUE(run->directionKnown);
  EXPECT_EQ(run->objectiveNames, (std::vector<std::string>{"time_ms", "registers"}));
  ASSERT_EQ(run->evals.size(), 2u);
  const RecordedEval &b = run->evals[0], &c = run->evals[1];
  EXPECT_TRUE(b.baseline);
  EXPECT_EQ(b.rendered, "");   // the baseline's row has no rendering, as results.csv
  EXPECT_EQ(c.id, "c0042");
  EXPECT_FALSE(c.baseline);
  EXPECT_EQ(c.rendered, cand.rendered.summary());
  EXPECT_EQ(c.controls, cand.rendered.controls.dump());
  EXPECT_EQ(*c.score, 1.25);
  EXPECT_EQ(c.unit, "GB/s");
  EXPECT_EQ(c.objectives, cand.scores);
  EXPECT_EQ(*c.cvPercent, 2.5);
  EXPECT_EQ(*c.runs, 3.0);
  EXPECT_EQ(*c.noisePercent, 0.75);
  EXPECT_EQ(c.stoppedBy, "max_repeats");
  EXPECT_EQ(c.runsSaved, 4);
  EXPECT_EQ(c.log, "logs/c0042.log");
  ASSERT_TRUE(c.journal);
  expectSame(cand, *c.journal);
}

// A damaged line stops the analysis with one line naming it.
TEST_F(RecordDir, AnalysisRefusesADamagedJournal) {
  json bad = evaluationToJson(everyField());
  bad["kernels"] = 7;
  std::string path = writeJournal({startLine(), bad});
  std::string error;
  EXPECT_FALSE(loadRun(path, error));
  EXPECT_NE(error.find("journal.jsonl:2: \"kernels\": expected an array, found an integer"), std::string::npos)
      << error;
  EXPECT_NE(error.find("the journal is damaged"), std::string::npos) << error;
}

// results.csv's one writer (writeResultsCsv) and the analysis reader meet in
// the column table (RunSchema.h): the run read from results.csv is the run
// read from the journal alone, cell for cell.
TEST_F(RecordDir, ResultsCsvAndJournalGiveTheSameRun) {
  Evaluation base = everyField(), cand = everyField(), bad = everyField();
  base.candidateId = "c0000";
  base.generation = 0;
  cand.candidateId = "c0001";
  cand.rendered.defines = {"NAME=\"a, b\""};   // a cell that needs quoting
  bad.candidateId = "c0002";
  bad.ok = false;
  bad.reason = "compile_error";
  bad.stoppedBy = "";
  bad.cvPercent = bad.noisePercent = -1;
  std::vector<Evaluation> evals = {base, cand, bad};
  TuneConfig cfg;
  for (const auto &o : everyStart().objectives) {
    Objective objective;
    objective.metric = o.metric;
    objective.direction = o.direction;
    objective.unit = o.unit;
    cfg.objectives.push_back(objective);
  }
  std::string error;
  ASSERT_TRUE(writeResultsCsv(dir + "/results.csv", cfg, evals, error)) << error;
  writeJournal({startLine(), evaluationToJson(base), evaluationToJson(cand), evaluationToJson(bad)});
  auto fromCsv = loadRun(dir, error);
  ASSERT_TRUE(fromCsv) << error;
  llvm::sys::fs::remove(dir + "/results.csv");
  auto journalOnly = loadRun(dir, error);
  ASSERT_TRUE(journalOnly) << error;
  EXPECT_EQ(fromCsv->objectiveNames, journalOnly->objectiveNames);
  ASSERT_EQ(fromCsv->evals.size(), 3u);
  ASSERT_EQ(journalOnly->evals.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const RecordedEval &a = fromCsv->evals[i], &b = journalOnly->evals[i];
    SCOPED_TRACE(a.id);
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.generation, b.generation);
    EXPECT_EQ(a.ok, b.ok);
    EXPECT_EQ(a.reason, b.reason);
    EXPECT_EQ(a.baseline, b.baseline);
    EXPECT_EQ(a.duplicateOf, b.duplicateOf);
    EXPECT_EQ(a.duplicateKind, b.duplicateKind);
    EXPECT_EQ(a.score, b.score);
    EXPECT_EQ(a.unit, b.unit);
    EXPECT_EQ(a.cvPercent, b.cvPercent);
    EXPECT_EQ(a.candidateHash, b.candidateHash);
    EXPECT_EQ(a.deviceCodeSha256, b.deviceCodeSha256);
    EXPECT_EQ(a.controls, b.controls);
    EXPECT_EQ(a.rendered, b.rendered);
    EXPECT_EQ(a.buildMs, b.buildMs);
    EXPECT_EQ(a.measureMs, b.measureMs);
    EXPECT_EQ(a.log, b.log);
    EXPECT_EQ(a.runs, b.runs);
    EXPECT_EQ(a.noisePercent, b.noisePercent);
    EXPECT_EQ(a.stoppedBy, b.stoppedBy);
    EXPECT_EQ(a.runsSaved, b.runsSaved);
    EXPECT_EQ(a.objectives, b.objectives);
    // Joined with the journal by id: the typed evaluation is there too.
    ASSERT_TRUE(a.journal);
    expectSame(evals[i], *a.journal);
  }
  EXPECT_EQ(fromCsv->evals[1].rendered, cand.rendered.summary());
}

// The attribution rows and minimization steps (AfterSearch.h) round-trip
// through the journal; the first attribution row is the reference and has no
// comparison members, a later one's undefined speedup is null.
TEST_F(RecordDir, AttributionAndMinimizationRoundTrip) {
  AttributionRow base{"baseline", "(none: the default compile)", 888, 0.5, 3, std::nullopt, std::nullopt, false, ""};
  AttributionRow both{"both", "-Xptxas --maxrregcount=64", 0, 1.5, 3, std::nullopt, 0.01, true, "better"};
  AttributionRow half{"parameters only", "-DTILE=8", 444, 2.5, 3, 2.0, std::nullopt, false, "may be noise"};
  std::vector<AttributionRow> rows = {base, both, half};
  std::vector<MinimizeStep> steps = {{"group ptxas controls", true, "p = 0.41: may be noise"},
                                     {"control tile", false, "worse"}};
  json written = attributionToJson(rows);
  EXPECT_FALSE(written[0].contains("speedup"));
  EXPECT_TRUE(written[1]["speedup"].is_null());
  std::string path = writeJournal({startLine(), {{"op", "attribution"}, {"rows", written}},
                                   {{"op", "minimize"}, {"candidate_id", "c0001"}, {"steps", minimizeStepsToJson(steps)}}});
  JournalContents c = readJournal(path);
  ASSERT_TRUE(c.damaged.empty()) << c.damaged.front();
  ASSERT_EQ(c.attribution.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const AttributionRow &a = rows[i], &b = c.attribution[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.controls, b.controls);
    EXPECT_EQ(a.median, b.median);
    EXPECT_EQ(a.cvPercent, b.cvPercent);
    EXPECT_EQ(a.runs, b.runs);
    EXPECT_EQ(a.speedup, b.speedup);
    EXPECT_EQ(a.pValue, b.pValue);
    EXPECT_EQ(a.significant, b.significant);
    EXPECT_EQ(a.verdict, b.verdict);
  }
  EXPECT_EQ(attributionToJson(c.attribution), written);
  ASSERT_EQ(c.minimization.size(), 2u);
  EXPECT_EQ(c.minimization[0].removed, "group ptxas controls");
  EXPECT_TRUE(c.minimization[0].dropped);
  EXPECT_EQ(c.minimization[1].detail, "worse");
  EXPECT_EQ(minimizeStepsToJson(c.minimization), minimizeStepsToJson(steps));
  // A wrong type is damage naming the row, not a crash of `ciq report`.
  json bad = written;
  bad[1]["speedup"] = "fast";
  writeJournal({{{"op", "attribution"}, {"rows", bad}}, {{"op", "minimize"}, {"steps", {{{"dropped", "yes"}}}}}});
  c = readJournal(path);
  ASSERT_EQ(c.damaged.size(), 2u);
  EXPECT_NE(c.damaged[0].find(":1: \"rows\"[1]: \"speedup\": expected a number or null, found a string"),
            std::string::npos)
      << c.damaged[0];
  EXPECT_NE(c.damaged[1].find(":2: \"steps\"[0]: \"dropped\": expected true or false"), std::string::npos)
      << c.damaged[1];
}

// The canary line: a resume skips the canary only when the last one passed
// or was skipped by --no-canary; a wrongly typed one is damage, not a pass.
TEST_F(RecordDir, TheLastCanaryLineSaysWhetherTheCanaryIsDone) {
  auto canaryDone = [&](std::vector<nlohmann::json> canaries, size_t damaged = 0) {
    std::vector<nlohmann::json> lines = {startLine(), evaluationToJson(everyField())};
    lines.insert(lines.end(), canaries.begin(), canaries.end());
    JournalContents c = readJournal(writeJournal(lines));
    EXPECT_EQ(c.damaged.size(), damaged);
    return c.canaryDone;
  };
  EXPECT_FALSE(canaryDone({}));
  EXPECT_TRUE(canaryDone({{{"op", "canary"}, {"ok", true}, {"reason", ""}}}));
  EXPECT_TRUE(canaryDone({{{"op", "canary"}, {"skipped", true}}}));
  EXPECT_FALSE(canaryDone({{{"op", "canary"}, {"ok", false}, {"reason", "compile_error"}}}));
  EXPECT_FALSE(canaryDone({{{"op", "canary"}, {"ok", true}}, {{"op", "canary"}, {"ok", false}}}));
  EXPECT_FALSE(canaryDone({{{"op", "canary"}, {"ok", "yes"}}}, 1));
}

// Issue 49 item 3: each run of a re-measurement after the search is
// journaled as it ends; a resume reads them back by key, round-major (NaN
// where no run was recorded: a raced build, or the kill came first), and a
// run already taken starts the key's rounds again (the same measurement
// made anew).
TEST_F(RecordDir, RunLinesReadBackByKey) {
  const std::string f = "finalists:c0000:c0003";
  JournalContents c = readJournal(writeJournal({startLine(), runToJson(f, 0, 0, 1.5), runToJson(f, 0, 1, 1.25),
                                                runToJson(f, 1, 1, 1.5), runToJson("minimization:ab:cd", 0, 0, 2),
                                                runToJson("attribution:x", 0, 0, 7), runToJson("attribution:x", 0, 0, 8)}));
  EXPECT_TRUE(c.damaged.empty());
  ASSERT_EQ(c.rounds[f].size(), 2u);
  EXPECT_EQ(c.rounds[f][0], (std::vector<double>{1.5, 1.25}));
  ASSERT_EQ(c.rounds[f][1].size(), 2u);
  EXPECT_TRUE(std::isnan(c.rounds[f][1][0]));
  EXPECT_EQ(c.rounds[f][1][1], 1.5);
  EXPECT_EQ(c.rounds["minimization:ab:cd"].size(), 1u);
  ASSERT_EQ(c.rounds["attribution:x"].size(), 1u);
  EXPECT_EQ(c.rounds["attribution:x"][0], (std::vector<double>{8}));
  c = readJournal(writeJournal({startLine(), {{"op", "run"}, {"key", "k"}, {"round", -1}, {"build", 0}, {"value", 1}},
                                {{"op", "run"}, {"key", "k"}, {"round", 0}, {"build", 0}, {"value", "fast"}}}));
  EXPECT_EQ(c.damaged.size(), 2u);
}
