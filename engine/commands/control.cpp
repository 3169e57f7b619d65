// `ciq status` and `ciq stop`: talk to a running engine over its socket.
#include "engine/commands/Command.h"
#include "engine/config/Config.h"
#include "engine/compile/Daemon.h"
#include "common/Protocol.h"
#include "engine/executors/slurm/SlurmExecutor.h"
#include "common/Socket.h"

using namespace llvm;

namespace {

cl::SubCommand StatusCmd("status", "Show the progress of the search running for a ciq.yaml");
cl::SubCommand StopCmd("stop", "Ask a running search to stop after its current evaluation (resumable)");
cl::opt<std::string> Config("config", cl::desc("ciq.yaml of the search"), cl::init("ciq.yaml"), cl::sub(StatusCmd),
                            cl::sub(StopCmd));

int talk(const std::string &op) {
  std::string err;
  auto cfg = ciq::openConfig(Config, err);
  if (!cfg)
    return ciq::reportError(err);
  std::string path;
  if (!ciq::socketPathFor(cfg->runDir, path, err))
    return ciq::reportError(err);
  auto sock = ciq::connectUnix(path, 0.5, err);
  // A killed engine's Slurm jobs still run: `ciq stop` cancels them itself.
  if (!sock && op == "stop" && cfg->executor.kind == "slurm") {
    int n = ciq::cancelSlurmJobs(cfg->runDir, err);
    if (n < 0)
      return ciq::reportError(err);
    printf("no engine is running for %s; cancelled %d Slurm job(s) of %s/slurm/jobs.json\n", cfg->target.c_str(), n,
           cfg->runDir.c_str());
    return 0;
  }
  if (!sock)
    return ciq::reportError("no search is running for " + cfg->target + " (socket " + path + ": " + err +
                            "); results so far: " + cfg->runDir + "/results.csv");
  sock->send(ciq::makeMessage(op));
  auto reply = sock->receive(5);
  if (!reply)
    return ciq::reportError("the engine did not answer on " + path + ": " + sock->error());
  reply->erase("v");
  reply->erase("op");
  printf("%s\n", reply->dump(2).c_str());
  return 0;
}

ciq::RegisterCommand regStatus(StatusCmd, [] { return talk("status"); });
ciq::RegisterCommand regStop(StopCmd, [] { return talk("stop"); });

} // namespace
