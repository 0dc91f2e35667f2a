#include "server/coordinator/internal/waiters.h"

#include <utility>
#include <vector>

namespace pstrain {
namespace coordinator {
namespace internal {

uint64_t Waiters::Add(Callback callback) {
  absl::MutexLock lock(&mu_);
  const uint64_t id = ++last_id_;
  callbacks_.emplace(id, std::move(callback));
  return id;
}

void Waiters::FireAll() {
  std::map<uint64_t, Callback> fired;
  {
    absl::MutexLock lock(&mu_);
    fired.swap(callbacks_);
  }
  for (auto& [id, callback] : fired) callback();
}

bool Waiters::Fire(uint64_t id) {
  Callback callback;
  {
    absl::MutexLock lock(&mu_);
    auto it = callbacks_.find(id);
    if (it == callbacks_.end()) return false;
    callback = std::move(it->second);
    callbacks_.erase(it);
  }
  callback();
  return true;
}

int Waiters::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(callbacks_.size());
}

}  // namespace internal
}  // namespace coordinator
}  // namespace pstrain
