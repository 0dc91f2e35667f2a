#ifndef PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_POINTER_H_
#define PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_POINTER_H_

// The `checkpoint` file of a model_dir: one line of text, the step of the
// newest checkpoint ("1200\n"), for people and scripts that want the latest
// checkpoint without listing the folder. It is a hint: the folders and their
// MANIFESTs are the truth (ListCheckpoints), since a crash between a commit
// and the pointer update leaves the pointer one checkpoint behind.
// Thread-safe when the Env is; two writers at once are not supported.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"

namespace pstrain {

// Replaces the pointer atomically (WriteFileAtomically).
absl::Status WriteCheckpointPointer(Env& env, const std::string& model_dir, int64_t step);

// NotFound: no pointer file. DataLoss: the file is not one step number (the
// message names the file and quotes its start).
absl::StatusOr<int64_t> ReadCheckpointPointer(Env& env, const std::string& model_dir);

// Removes the pointer; OK if there is none.
absl::Status RemoveCheckpointPointer(Env& env, const std::string& model_dir);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_POINTER_H_
