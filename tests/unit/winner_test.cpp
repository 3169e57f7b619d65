// Choosing the winner: objectives first, then the simplest configuration.
#include "engine/winner/Winner.h"

#include <gtest/gtest.h>

using namespace ciq;

namespace {

Evaluation eval(const std::string &id, double spill, nlohmann::json controls, bool ok = true) {
  Evaluation e;
  e.candidateId = id;
  e.generation = id == "c0000" ? 0 : 1;
  e.ok = ok;
  e.scores["spill_bytes"] = spill;
  e.rendered.controls = controls;
  return e;
}

TuneConfig spillConfig() {
  TuneConfig cfg;
  cfg.objectives.push_back({"spill_bytes", "minimize", "bytes", {}, "sum", {}});
  return cfg;
}

} // namespace

TEST(Winner, TiesGoToTheFewestControls) {
  auto cfg = spillConfig();
  std::vector<Evaluation> evals = {
      eval("c0000", 888, nlohmann::json::object()),
      eval("c0001", 680, {{"opt-level", "1"}, {"fmad", "false"}, {"def-load-cache", "lu"}}),
      eval("c0002", 680, {{"opt-level", "1"}}),
      eval("c0003", 700, {{"register-usage-level", "2"}}),
  };
  WinnerChoice w = chooseWinner(cfg, evals);
  EXPECT_EQ(w.index, 2);
  EXPECT_TRUE(w.improved);
}

TEST(Winner, BaselineWinsWhenNothingIsBetter) {
  auto cfg = spillConfig();
  std::vector<Evaluation> evals = {eval("c0000", 888, nlohmann::json::object()),
                                   eval("c0001", 888, {{"opt-level", "2"}}),
                                   eval("c0002", 10, {{"opt-level", "0"}}, /*ok=*/false)};
  WinnerChoice w = chooseWinner(cfg, evals);
  EXPECT_EQ(w.index, 0);
  EXPECT_FALSE(w.improved);
}

TEST(Winner, MaximizedObjectivesAreNegated) {
  TuneConfig cfg;
  cfg.objectives.push_back({"gflops", "maximize", "GFLOP/s", {}, "sum", {}});
  std::vector<Evaluation> evals(2);
  evals[0].candidateId = "c0000";
  evals[0].ok = true;
  evals[0].scores["gflops"] = 100;
  evals[1].candidateId = "c0001";
  evals[1].generation = 1;
  evals[1].ok = true;
  evals[1].scores["gflops"] = 120;
  WinnerChoice w = chooseWinner(cfg, evals);
  EXPECT_EQ(w.index, 1);
  EXPECT_TRUE(w.improved);
}
