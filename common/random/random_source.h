#ifndef PSTRAIN_COMMON_RANDOM_RANDOM_SOURCE_H_
#define PSTRAIN_COMMON_RANDOM_RANDOM_SOURCE_H_

#include <cstdint>
#include <random>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace pstrain {

// Randomness a process needs (incarnation numbers, backoff jitter), behind
// an interface so tests make it repeatable. Implementations are thread-safe.
class RandomSource {
 public:
  virtual ~RandomSource() = default;

  // A uniformly distributed 64-bit value.
  virtual uint64_t Next() = 0;

  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
};

// A Mersenne twister seeded once, from std::random_device when no seed is
// given. Thread-safe.
class SeededRandom : public RandomSource {
 public:
  SeededRandom() : engine_(std::random_device()() ^ (uint64_t{std::random_device()()} << 32)) {}
  explicit SeededRandom(uint64_t seed) : engine_(seed) {}

  uint64_t Next() override {
    absl::MutexLock l(&mu_);
    return engine_();
  }

 private:
  absl::Mutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_RANDOM_RANDOM_SOURCE_H_
