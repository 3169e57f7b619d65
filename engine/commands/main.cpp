// ciq: the engine's command-line entry point. The work lives in the engine
// library and in engine/commands/*.cpp; this file only dispatches.
#include "engine/commands/Command.h"
#include "common/Subprocess.h"
#include "engine/Version.h"

#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/PrettyStackTrace.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

namespace ciq {

std::vector<CommandEntry> &commandRegistry() {
  static std::vector<CommandEntry> entries;
  return entries;
}

} // namespace ciq

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // A crash is ciq's bug, not LLVM's: the stack trace must not send users there.
  llvm::setBugReportMsg("ciq crashed; please report it to the ciq project with the command line, ciq.yaml and the "
                        "stack trace below (docs/troubleshooting.md)\n");
  // Builds and benchmarks run in their own process groups; Ctrl-C or a kill
  // of ciq must end them too (the journal stays consistent: it is fsync'd
  // per evaluation).
  ciq::forwardTerminationSignals();
  ciq::keepInheritedDescriptorsToSelf();
  // LLVM's own libraries register options of theirs (IR, codegen); they mean
  // nothing to a ciq user, so --help shows only ciq's.
  for (auto &entry : llvm::cl::getRegisteredOptions(*llvm::cl::TopLevelSubCommand))
    if (entry.getKey() != "help" && entry.getKey() != "version" && entry.getKey() != "color")
      entry.getValue()->setHiddenFlag(llvm::cl::ReallyHidden);
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << "ciq " << CIQ_VERSION << "\n"; });
  // A value the parser refused (`ciq sample abc`) ends the command: given
  // an error stream, the parser says so instead of running on with defaults.
  if (!llvm::cl::ParseCommandLineOptions(
          argc, argv,
          "ciq: tunes NVIDIA's CUDA compilers (ptxas, nvcc) to one workload.\n\n"
          "  ciq tune [--config ciq.yaml]     search, then freeze the winner in ciq.lock\n"
          "  ciq <subcommand> --help          options of one subcommand\n",
          &llvm::errs()))
    return 1;
  for (auto &entry : ciq::commandRegistry())
    if (*entry.sub) {
      int status = entry.run();
      ciq::endLeftoverProcesses();
      return status;
    }
  llvm::errs() << "ciq: no subcommand given; run 'ciq --help' for the list\n";
  return 2;
}
