// pstrain: the command-line client of a pstrain cluster.

#include <iostream>
#include <string>
#include <vector>

#include "client/local_command.h"
#include "client/train_local_command.h"
#include "common/cli/command_line.h"

namespace {

constexpr char kUsage[] =
    "pstrain: run and drive pstrain training clusters.\n"
    "\n"
    "Usage: pstrain COMMAND [ARGS] [--flags]\n"
    "\n"
    "Commands:\n"
    "  local [JOB.pbtxt]\n"
    "           start a whole cluster on this machine (coordinator, parameter servers,\n"
    "           workers, evaluator) as processes on loopback and check that every one is\n"
    "           healthy; with a job spec, run the job, show its progress and print its\n"
    "           final metrics (Ctrl-C stops it after a final checkpoint); then stop the\n"
    "           cluster (--keep_running: stay up until Ctrl-C). Example:\n"
    "             pstrain local examples/fashion_mnist_mlp.pbtxt\n"
    "  train-local JOB.pbtxt\n"
    "           train a job in this one process (no cluster), evaluate it and print the\n"
    "           metrics; --output=json for one JSON object. Example:\n"
    "             pstrain train-local examples/fashion_mnist_mlp.pbtxt --max_steps=500\n"
    "\n"
    "Each flag below says which command it belongs to.";

}  // namespace

int main(int argc, char** argv) {
  pstrain::InitCommandLine(kUsage, &argc, &argv);
  if (argc < 2) {
    std::cerr << kUsage << "\n\npstrain: no command given (see pstrain --help)\n";
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "local") return pstrain::RunLocalCommand(args);
  if (command == "train-local") return pstrain::RunTrainLocalCommand(args);
  std::cerr << "pstrain: unknown command '" << command << "' (see pstrain --help)\n";
  return 2;
}
