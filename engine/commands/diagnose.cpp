// `ciq diagnose [results.csv | run dir]`: names the pathologies of a finished
// or running search (engine/analysis/Diagnose). Exit status: 0 clean,
// 3 when something was found, 1 when the run cannot be read.
#include "engine/commands/Command.h"
#include "engine/commands/RunPath.h"
#include "engine/analysis/Diagnose.h"

#include <llvm/Support/raw_ostream.h>

namespace {

using namespace ciq;
namespace cl = llvm::cl;

cl::SubCommand DiagnoseCmd("diagnose",
                           "Name what went wrong in a search (results.csv + journal.jsonl)");
cl::opt<std::string> ConfigPath("config", cl::sub(DiagnoseCmd),
                                cl::desc("ciq.yaml of the search: read its run_dir"));
cl::opt<std::string> RunPath(cl::Positional, cl::sub(DiagnoseCmd), cl::init("."),
                             cl::desc("<run dir | results.csv | journal.jsonl> (default: .)"));
cl::opt<double> CvThreshold("cv-threshold", cl::sub(DiagnoseCmd), cl::init(5.0),
                            cl::desc("median CV% above which measurements are too noisy (%)"));

int run() {
  std::string error;
  auto path = searchRunPath(RunPath, RunPath.getNumOccurrences() > 0, ConfigPath);
  if (!path)
    return 1;
  auto data = loadRun(*path, error);
  if (!data)
    return reportError(error);
  DiagnoseThresholds t;
  t.highCvPercent = CvThreshold;
  auto findings = diagnose(*data, t);
  printFindings(*data, findings, llvm::outs());
  return findings.empty() ? 0 : 3;
}

RegisterCommand reg(DiagnoseCmd, run);

} // namespace
