// pstrain: the command-line client of a pstrain cluster.

#include <iostream>
#include <string>
#include <vector>

#include "client/local_command.h"
#include "common/cli/command_line.h"

namespace {

constexpr char kUsage[] =
    "pstrain: run and drive pstrain training clusters.\n"
    "\n"
    "Usage: pstrain COMMAND [ARGS] [--flags]\n"
    "\n"
    "Commands:\n"
    "  local    start a whole cluster on this machine (coordinator, parameter servers,\n"
    "           workers, evaluator) as processes on loopback, check that every one is\n"
    "           healthy, then stop it (--keep_running to keep it up until Ctrl-C)\n"
    "\n"
    "Flags of a command are prefixed by its name in the list below.";

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
  std::cerr << "pstrain: unknown command '" << command << "' (see pstrain --help)\n";
  return 2;
}
