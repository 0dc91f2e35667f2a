#include "common/config/checkpoint_root.h"

#include <cstdlib>

namespace pstrain {

std::string ExpandCheckpointRoot(const std::string& root) {
  if (root.empty() || root[0] != '~' || (root.size() > 1 && root[1] != '/')) return root;
  const char* home = std::getenv("HOME");
  std::string base = home != nullptr && home[0] == '/' ? home : "/tmp";
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (base == "/") base.clear();
  return base + root.substr(1);
}

}  // namespace pstrain
