// A receipt is checked against what the engine asked for before it counts
// (issue 29): any same-user client that knows the engine's token can send
// one, and a receipt's figures become the candidate's scores. It must come
// on the connection whose hello the engine answered with a candidate, for
// that candidate and that hello's output (a tuned object, for a launcher
// compile), with statistics a compiler can produce. Anything else is refused
// (an error reply, a line in logs/engine-socket.log, a warning of the build)
// and never scored.
#pragma once
#include "common/Protocol.h"

#include <optional>
#include <set>
#include <string>

namespace ciq {

// What the daemon answered one connection's hello with: the one receipt that
// connection may send is for this.
struct AnsweredHello {
  std::string candidateId;
  std::string candidateHash;
  std::string output;   // the hello's output (physical path, as tuned objects are named)
  std::string mode;     // "launcher", "ptxas-standin", "nvcc-standin"
};

// Registers one thread can use on every architecture CUDA 13 compiles for.
constexpr int kMaxRegistersPerThread = 255;
// Named barriers per block (bar.sync 0..15).
constexpr int kMaxBarriers = 16;
// Larger than any kernel's stack, spills, shared or constant memory, or an
// object's device code, can be.
constexpr long kAbsurdBytes = 1L << 32;

// "" when `r` is the receipt that `hello` (nullopt: the connection sent no
// hello, or its hello got no candidate, or it sent its receipt already) lets
// this connection send, with this engine's token, for an output the engine
// tunes (`tuned`, when a launcher compile and the engine knows them), with
// plausible figures; else why it is refused, in one line.
std::string checkReceipt(const Receipt &r, const std::optional<AnsweredHello> &hello,
                         const std::set<std::string> &tuned, const std::string &token);

} // namespace ciq
