#ifndef PSTRAIN_COMMON_CONFIG_CHECKPOINT_ROOT_H_
#define PSTRAIN_COMMON_CONFIG_CHECKPOINT_ROOT_H_

#include <string>

namespace pstrain {

// The default --checkpoint_root of the coordinator, the parameter servers
// and `pstrain local`: "~/pstrain", where a run survives a reboot (/tmp is
// often memory). Written with "~" so that help and docs read the same on
// every machine; ExpandCheckpointRoot makes it a path.
inline constexpr char kDefaultCheckpointRoot[] = "~/pstrain";

// `root` with a leading "~" (alone or before '/') replaced by $HOME, or by
// "/tmp" when HOME is unset or not an absolute path (a daemon started
// without one), so that every process of one user agrees. Any other root
// is returned as it is.
std::string ExpandCheckpointRoot(const std::string& root);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_CHECKPOINT_ROOT_H_
