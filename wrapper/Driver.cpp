#include "wrapper/Driver.h"

#include "common/EnvNames.h"
#include "wrapper/Invocation.h"
#include "common/LockMode.h"
#include "wrapper/Runs.h"

#include <llvm/Support/raw_ostream.h>

namespace ciq::wrapper {

int runWrapper(int argc, char **argv) {
  Invocation inv;
  std::string self = baseName(argv[0]);
  std::string error;
  if (self == "ptxas" || self == "nvcc") {
    inv.mode = self + "-standin";
    inv.kind = self;
    if (!enterStandin(self, error))
      return fail(error, 127);
    auto real = findReal(self, error);
    if (!real)
      return fail(error, 127);
    inv.compilerPath = *real;
    inv.prefix = {*real};
    for (int i = 1; i < argc; ++i)
      inv.args.push_back(argv[i]);
  } else {
    inv.mode = "launcher";
    if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
      llvm::outs() << "usage: ciq-ptxas [--lock FILE] [--lock-policy error|warn] [launcher...] <nvcc|ptxas> args...\n"
                      "Runs the compiler unchanged, or with the candidate of a tuning run (CIQ_SOCKET) or a\n"
                      "lockfile's winner (--lock/CIQ_LOCK). See docs/wrapper.md.\n";
      return 0;
    }
    if (argc == 2 && std::string(argv[1]) == "--version") {
      llvm::outs() << "ciq-ptxas " << CIQ_VERSION << " (the compiler's own version: ciq-ptxas <nvcc|ptxas> --version)\n";
      return 0;
    }
    if (!parseLauncher(argc, argv, inv, error))
      return fail(error, 2);
    // An explicit policy is checked even without a lock: a typo must not wait
    // for the day a lock is used.
    if (!parseLockPolicy(inv.lockPolicy))
      return fail("lock policy '" + inv.lockPolicy + "' is not one of error, warn (--lock-policy)", 2);
  }
  // Inside a command ciq-ptxas already injected (a stand-in reached through a launcher): pass through.
  bool wrapped = getEnv(env::Wrapped) == "1" && inv.mode != "launcher";
  std::string socket = getEnv(env::Socket);
  // The rehearsal of a winner (ciq tune, ciq validate) builds the tree as the
  // lock about to be written will build it: that lock, whatever --lock the
  // configure put in the launcher chain, without an earlier lock's arguments.
  if (std::string rehearsal = getEnv(env::RehearsalLock); !rehearsal.empty()) {
    inv.lockPath = rehearsal;
    inv.replacesLock = getEnv(env::RehearsalReplaces);
  } else if (inv.lockPath.empty())
    inv.lockPath = getEnv(env::Lock);
  if (getEnv(env::LockPolicy).size() && inv.lockPolicy == "error")
    inv.lockPolicy = getEnv(env::LockPolicy);
  auto passThrough = [&] {
    auto a = inv.prefix;
    a.insert(a.end(), inv.args.begin(), inv.args.end());
    return execArgv(a);
  };
  if (wrapped || inv.kind.empty())
    return passThrough();
  if (!socket.empty())
    return tuningRun(inv, socket);
  if (!inv.lockPath.empty())
    return lockRun(inv);
  return passThrough();
}

} // namespace ciq::wrapper
