#ifndef PSTRAIN_CLIENT_OUTPUT_PATH_FLAG_H_
#define PSTRAIN_CLIENT_OUTPUT_PATH_FLAG_H_

// --to: where a command that writes a file or a folder (`export`, `report`)
// puts it, one name for the idea in every command. Each command says in its
// help what it writes there and what the default is.

#include "gflags/gflags.h"

DECLARE_string(to);

#endif  // PSTRAIN_CLIENT_OUTPUT_PATH_FLAG_H_
