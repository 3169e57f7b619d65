// Issue 29 item 6: receipts are checked against what the engine asked for.
// A same-user client with the engine's token sent a receipt with no hello,
// for an output that is no tuned object, with spill_stores -1000, and the
// candidate scored spill_bytes = -1000. checkReceipt refuses each of those;
// the daemon replies with an error, logs it and never counts the receipt.
#include "common/Socket.h"
#include "engine/compile/Daemon.h"
#include "engine/compile/ReceiptCheck.h"

#include <fstream>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

using namespace ciq;
using nlohmann::json;

namespace {

const std::string kToken = "t0k3n";
const std::string kObject = "/b/CMakeFiles/app.dir/kern.cu.o";

AnsweredHello hello() { return {"c0002", "h2", kObject, "launcher"}; }

// A receipt as the real wrapper sends it for hello()'s compile.
Receipt genuine() {
  Receipt r;
  r.candidateId = "c0002";
  r.candidateHash = "h2";
  r.engineToken = kToken;
  r.source = "/s/kern.cu";
  r.output = kObject;
  r.status = "ok";
  r.wallMs = 812.5;
  r.ptxasRan = true;
  r.deviceCodeSha256 = std::string(64, 'a');
  r.deviceCodeBytes = 9000;
  KernelStats k;
  k.name = "_Z4kernPf";
  k.arch = "sm_90";
  k.registers = 40;
  k.spillStores = 8;
  k.stackFrame = 16;
  r.kernels = {k};
  return r;
}

std::string check(const Receipt &r, std::optional<AnsweredHello> h = hello()) {
  return checkReceipt(r, h, {kObject}, kToken);
}

} // namespace

TEST(ReceiptCheck, TheReceiptAHelloAskedForPasses) {
  EXPECT_EQ(check(genuine()), "");
  // Stand-in compiles (a command build, a kernel compiled at run time) have
  // outputs the engine does not know beforehand: their hello's output is the rule.
  Receipt r = genuine();
  r.output = "/cache/k.cubin";
  EXPECT_EQ(checkReceipt(r, AnsweredHello{"c0002", "h2", "/cache/k.cubin", "ptxas-standin"}, {kObject}, kToken), "");
  // A compile that failed has no statistics, and says why.
  r = genuine();
  r.status = "compile_error";
  r.kernels.clear();
  r.deviceCodeSha256.clear();
  EXPECT_EQ(check(r), "");
}

TEST(ReceiptCheck, NoHelloOrAnotherCandidateIsRefused) {
  EXPECT_NE(check(genuine(), std::nullopt).find("whose hello got no candidate"), std::string::npos);
  Receipt r = genuine();
  r.candidateId = "c0003";
  EXPECT_NE(check(r).find("was given c0002"), std::string::npos) << check(r);
  r = genuine();
  r.candidateHash = "other";
  EXPECT_NE(check(r), "");
  r = genuine();
  r.engineToken = "stale";
  EXPECT_NE(check(r).find("token"), std::string::npos);
}

TEST(ReceiptCheck, OnlyTheHellosOutputAndATunedObject) {
  Receipt r = genuine();
  r.output = "/elsewhere/evil.o";
  EXPECT_NE(check(r).find("hello named " + kObject), std::string::npos) << check(r);
  // Even a hello that named it: a launcher compile's output must be tuned.
  EXPECT_NE(checkReceipt(r, AnsweredHello{"c0002", "h2", "/elsewhere/evil.o", "launcher"}, {kObject}, kToken)
                .find("no object of the tuned targets"),
            std::string::npos);
}

TEST(ReceiptCheck, ImplausibleFiguresAreRefused) {
  auto withKernel = [](auto edit) {
    Receipt r = genuine();
    edit(r.kernels[0]);
    return r;
  };
  std::string why = check(withKernel([](KernelStats &k) { k.spillStores = -1000; }));
  EXPECT_NE(why.find("implausible figures: kernel _Z4kernPf: spill_stores -1000"), std::string::npos) << why;
  EXPECT_NE(check(withKernel([](KernelStats &k) { k.registers = 256; })).find("registers 256 outside 0..255"),
            std::string::npos);
  EXPECT_NE(check(withKernel([](KernelStats &k) { k.registers = -1; })), "");
  EXPECT_NE(check(withKernel([](KernelStats &k) { k.barriers = 17; })), "");
  EXPECT_NE(check(withKernel([](KernelStats &k) { k.sharedBytes = kAbsurdBytes + 1; })), "");
  EXPECT_NE(check(withKernel([](KernelStats &k) { k.stackFrame = -8; })), "");
  EXPECT_NE(check(withKernel([](KernelStats &k) { k.compileMs = -1; })), "");
  Receipt r = genuine();
  r.deviceCodeBytes = -5;
  EXPECT_NE(check(r), "");
  r = genuine();
  r.deviceCodeSha256 = "not-a-hash";
  EXPECT_NE(check(r), "");
  r = genuine();
  r.status = "great";
  EXPECT_NE(check(r), "");
  r = genuine();
  r.wallMs = -3;
  EXPECT_NE(check(r), "");
  r = genuine();
  r.ptxReuse = "magic";
  EXPECT_NE(check(r), "");
}

namespace {

// One connection speaking the protocol: each message, and the reply.
struct Client {
  LineSocket sock;
  explicit Client(const std::string &path) {
    std::string err;
    auto s = connectUnix(path, 2, err);
    EXPECT_TRUE(s) << err;
    if (s)
      sock = std::move(*s);
  }
  json say(const json &msg) {
    sock.send(msg);
    auto reply = sock.receive(5);
    return reply ? *reply : json{{"op", "closed"}};
  }
};

json receiptMessage(const Daemon &d, const std::string &output, long spillStores) {
  Receipt r = genuine();
  r.candidateHash = "";
  r.engineToken = d.token();
  r.output = output;
  r.kernels[0].spillStores = spillStores;
  return makeMessage("receipt", r);
}

} // namespace

// The attack of the issue, over the socket: no receipt of it is counted, each
// is refused and logged; the genuine one after a hello is.
TEST(Daemon, ReceiptsOnlyAnswerTheirOwnHello) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("ciq-receipt", dir);
  std::string object = dir.str().str() + "/kern.cu.o";
  Daemon d;
  d.setLogPath(dir.str().str() + "/socket.log");
  d.setTunedOutputs({object});
  std::string err;
  ASSERT_TRUE(d.start(dir.str().str() + "/e.sock", err)) << err;
  CandidateMessage c;
  c.candidateId = "c0002";
  d.setCandidate(c);
  json hello = makeMessage("hello", {{"engine_token", d.token()}, {"mode", "launcher"}, {"output", object}});

  EXPECT_EQ(Client(d.socketPath()).say(receiptMessage(d, object, 8))["op"], "error"); // no hello
  EXPECT_EQ(Client(d.socketPath()).say(receiptMessage(d, "/x/not-tuned.o", 8))["op"], "error");
  {
    Client cl(d.socketPath());
    ASSERT_EQ(cl.say(hello)["op"], "candidate");
    json reply = cl.say(receiptMessage(d, object, -1000));
    EXPECT_EQ(reply["op"], "error");
    EXPECT_NE(reply.value("message", "").find("spill_stores -1000"), std::string::npos) << reply.dump();
  }
  {
    Client cl(d.socketPath());
    json untuned = hello;
    untuned["output"] = "/x/not-tuned.o";
    ASSERT_EQ(cl.say(untuned)["op"], "pass");
    EXPECT_EQ(cl.say(receiptMessage(d, "/x/not-tuned.o", 8))["op"], "error");
  }
  EXPECT_TRUE(d.receipts().empty());
  EXPECT_EQ(d.refusedReceipts(), 4);
  {
    Client cl(d.socketPath());
    ASSERT_EQ(cl.say(hello)["op"], "candidate");
    EXPECT_EQ(cl.say(receiptMessage(d, object, 8))["op"], "ack");
    EXPECT_EQ(cl.say(receiptMessage(d, object, 8))["op"], "error"); // one receipt per hello
  }
  ASSERT_EQ(d.receipts().size(), 1u);
  EXPECT_EQ(d.receipts()[0].kernels[0].spillStores, 8);
  EXPECT_NE(d.lastRefusedReceipt().find("sent its receipt already"), std::string::npos) << d.lastRefusedReceipt();
  d.stop();
  std::ifstream log(dir.str().str() + "/socket.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("refused a message: a receipt for " + object + " with implausible figures"), std::string::npos)
      << text;
  llvm::sys::fs::remove_directories(dir);
}
