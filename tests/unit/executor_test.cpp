// The twin rule every executor applies (engine/executors/BatchTwins.h) and
// the local executor's workers taking a batch in pool order.
#include "engine/executors/BatchTwins.h"
#include "engine/executors/LocalExecutor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace ciq {
namespace {

Evaluation header(const std::string &id, const std::string &hash) {
  Evaluation e;
  e.candidateId = id;
  e.candidateHash = hash;
  return e;
}

KnownResults nothingKnown() {
  KnownResults k;
  k.byConfiguration = [](const std::string &) { return std::optional<Evaluation>(); };
  k.byDeviceCode = [](const Evaluation &) { return std::optional<Evaluation>(); };
  k.reuseKey = [](const Evaluation &e) { return e.deviceCodeSha256; };
  return k;
}

// Candidates whose "build" gives the device code in `code` (by id), slower
// for the earlier ones, so that later candidates are identified first.
struct FakeBuilds {
  std::map<std::string, std::string> code;
  std::atomic<int> measured{0}, started{0};
  std::mutex m;
  std::vector<std::string> measuredIds;
  std::function<void()> beforeBuild;   // e.g. hold the builds until the executor did something
  LocalExecutor::EvaluateOne one() {
    return [this](Evaluation &e, Worker &, const std::function<const Evaluation *(const Evaluation &)> &twin) {
      int k = std::stoi(e.candidateId.substr(1));
      ++started;
      if (beforeBuild)
        beforeBuild();
      std::this_thread::sleep_for(std::chrono::milliseconds(40 - 10 * (k % 4)));
      e.deviceCodeSha256 = code[e.candidateId];
      e.ok = true;
      if (const Evaluation *d = twin(e)) {
        e.duplicateOf = d->candidateId;
        e.duplicateKind = "device_code";
        return;
      }
      ++measured;
      std::lock_guard<std::mutex> g(m);
      measuredIds.push_back(e.candidateId);
    };
  }
};

std::vector<std::unique_ptr<Worker>> workers(int n) {
  std::vector<std::unique_ptr<Worker>> w;
  for (int k = 0; k < n; ++k)
    w.push_back(std::make_unique<Worker>());
  return w;
}

TEST(LocalExecutor, OneBinaryIsMeasuredOnceWhicheverBuildEndsFirst) {
  FakeBuilds b;
  b.code = {{"c0", "A"}, {"c1", "B"}, {"c2", "A"}, {"c3", "A"}, {"c4", "B"}, {"c5", "C"}};
  auto w = workers(3);
  LocalExecutor ex(w, b.one(), [] { return false; });
  std::vector<Evaluation> batch;
  for (int k = 0; k < 6; ++k)
    batch.push_back(header("c" + std::to_string(k), "h" + std::to_string(k)));
  KnownResults known = nothingKnown();
  ASSERT_EQ(ex.evaluate(batch, known), 6u);
  EXPECT_EQ(b.measured, 3);
  // The earliest candidate in pool order with each binary is the measured one.
  EXPECT_EQ(batch[2].duplicateOf, "c0");
  EXPECT_EQ(batch[3].duplicateOf, "c0");
  EXPECT_EQ(batch[4].duplicateOf, "c1");
  EXPECT_TRUE(batch[0].duplicateOf.empty());
  EXPECT_TRUE(batch[5].duplicateOf.empty());
}

TEST(LocalExecutor, SameConfigurationInOneBatchIsBuiltOnce) {
  FakeBuilds b;
  b.code = {{"c0", "A"}, {"c1", "A"}, {"c2", "B"}};
  auto w = workers(2);
  LocalExecutor ex(w, b.one(), [] { return false; });
  std::vector<Evaluation> batch = {header("c0", "same"), header("c1", "same"), header("c2", "other")};
  KnownResults known = nothingKnown();
  ASSERT_EQ(ex.evaluate(batch, known), 3u);
  EXPECT_EQ(b.measured, 2);
  EXPECT_EQ(batch[1].duplicateKind, "config");
  EXPECT_EQ(batch[1].duplicateOf, "c0");
  EXPECT_EQ(batch[1].candidateId, "c1");
}

TEST(LocalExecutor, RecordedBinaryIsNotMeasuredAgain) {
  FakeBuilds b;
  b.code = {{"c0", "A"}, {"c1", "Z"}};
  Evaluation recorded = header("c9", "old");
  recorded.deviceCodeSha256 = "Z";
  recorded.ok = true;
  KnownResults known = nothingKnown();
  known.byDeviceCode = [&](const Evaluation &e) {
    return e.deviceCodeSha256 == "Z" ? std::optional<Evaluation>(recorded) : std::nullopt;
  };
  auto w = workers(2);
  LocalExecutor ex(w, b.one(), [] { return false; });
  std::vector<Evaluation> batch = {header("c0", "h0"), header("c1", "h1")};
  ASSERT_EQ(ex.evaluate(batch, known), 2u);
  EXPECT_EQ(b.measured, 1);
  EXPECT_EQ(batch[1].duplicateOf, "c9");
}

TEST(LocalExecutor, StopEndsTheBatchAtACompletePrefix) {
  FakeBuilds b;
  for (int k = 0; k < 8; ++k)
    b.code["c" + std::to_string(k)] = std::to_string(k);
  auto w = workers(2);
  std::atomic<int> asked{0};
  LocalExecutor ex(w, b.one(), [&] { return ++asked > 3; });
  std::vector<Evaluation> batch;
  for (int k = 0; k < 8; ++k)
    batch.push_back(header("c" + std::to_string(k), "h" + std::to_string(k)));
  KnownResults known = nothingKnown();
  size_t complete = ex.evaluate(batch, known);
  EXPECT_LT(complete, 8u);
  for (size_t k = 0; k < complete; ++k)
    EXPECT_TRUE(batch[k].ok) << k;
}

// A search as the executor sees it: `total` candidates c0, c1, ... handed
// out as asked; records what it got back and when it was asked.
struct FakeFeed : SearchFeed {
  int total = 0, given = 0;
  size_t haltAfter = 0;   // 0: never halts
  const std::atomic<int> *started = nullptr;
  int startedAtHalt = -1;
  std::vector<std::string> recorded;
  std::vector<std::pair<int, size_t>> takes;   // (given before, recorded before) of each non-empty take
  std::atomic<bool> halt{false};
  std::atomic<int> nonEmptyTakes{0};
  std::vector<Evaluation> take(size_t most) override {
    std::vector<Evaluation> out;
    for (; given < total && out.size() < most; ++given)
      out.push_back(header("c" + std::to_string(given), "h" + std::to_string(given)));
    if (!out.empty()) {
      takes.push_back({given - (int)out.size(), recorded.size()});
      ++nonEmptyTakes;
    }
    return out;
  }
  bool more() const override { return given < total; }
  bool halted() const override { return halt; }
  void record(Evaluation &e) override {
    recorded.push_back(e.candidateId);
    if (haltAfter && recorded.size() >= haltAfter && !halt) {
      halt = true;
      startedAtHalt = started ? started->load() : -1;
    }
  }
};

TEST(LocalExecutor, StreamTakesMoreBeforeEarlierResultsAndRecordsInOrder) {
  FakeBuilds b;
  for (int k = 0; k < 9; ++k)
    b.code["c" + std::to_string(k)] = std::to_string(k % 5);   // c5..c8 repeat c0..c3's code
  auto w = workers(3);
  FakeFeed feed;
  feed.total = 9;
  // No build ends before the executor asked for more (or 10 s passed): the
  // second take must not wait for a result, however loaded the machine is.
  b.beforeBuild = [&] {
    for (int i = 0; i < 1000 && feed.nonEmptyTakes < 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  LocalExecutor ex(w, b.one(), [] { return false; });
  ex.stream(feed, nothingKnown());
  ASSERT_EQ(feed.recorded.size(), 9u);
  for (int k = 0; k < 9; ++k)
    EXPECT_EQ(feed.recorded[k], "c" + std::to_string(k));
  // The second take came before any result: workers build the next
  // candidates while earlier ones are measured.
  ASSERT_GE(feed.takes.size(), 2u);
  EXPECT_EQ(feed.takes[1].second, 0u);
  // One binary is measured once across takes.
  EXPECT_EQ(b.measured, 5);
}

TEST(LocalExecutor, HaltedStreamRecordsACompletePrefixAndStartsNoMore) {
  FakeBuilds b;
  for (int k = 0; k < 40; ++k)
    b.code["c" + std::to_string(k)] = std::to_string(k);
  auto w = workers(2);
  LocalExecutor ex(w, b.one(), [] { return false; });
  FakeFeed feed;
  feed.total = 40;
  feed.haltAfter = 3;
  feed.started = &b.started;
  ex.stream(feed, nothingKnown());
  // The candidates started before the halt end and are recorded, in order;
  // none is started after it (a worker may have taken one as it came).
  ASSERT_GE(feed.recorded.size(), 3u);
  EXPECT_LT(feed.recorded.size(), 40u);
  EXPECT_LE(b.started, feed.startedAtHalt + 2);
  for (size_t k = 0; k < feed.recorded.size(); ++k)
    EXPECT_EQ(feed.recorded[k], "c" + std::to_string(k));
  EXPECT_EQ(b.started, (int)feed.recorded.size());
}

TEST(BatchTwins, AnInvalidEarlierCandidateIsNoTwin) {
  std::vector<Evaluation> batch = {header("c0", "h0"), header("c1", "h1")};
  KnownResults known = nothingKnown();
  BatchTwins t(batch, known);
  batch[0].deviceCodeSha256 = "A";
  EXPECT_EQ(t.deviceTwin(0, batch[0]), nullptr);
  batch[0].ok = false;   // e.g. wrong output
  t.finished(0);
  batch[1].deviceCodeSha256 = "A";
  EXPECT_EQ(t.deviceTwin(1, batch[1]), nullptr);
}

} // namespace
} // namespace ciq
