#ifndef PSTRAIN_SERVER_PS_SYNC_ROUND_SUM_H_
#define PSTRAIN_SERVER_PS_SYNC_ROUND_SUM_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "server/ps/float_buffer.h"
#include "server/ps/gradient_copy.h"
#include "server/ps/gradient_ref.h"

namespace pstrain {

// The sum of one sync round's gradients, added in slot order (slot 0, then
// 1, ...) whatever order the pushes arrive in. Float addition is not
// associative beyond two terms, so a sum in arrival order would differ in
// its last bits from run to run; in slot order a round with the same
// contributions sums to the same bits every time. A contribution that
// arrives before every lower slot's is copied and added once they are in,
// so pushes arriving in slot order cost nothing extra and one arriving early
// costs one copy of its gradient. Not thread-safe (the shard guards it).
class SyncRoundSum {
 public:
  // What the sum needs to know of each variable, by index.
  struct VariableShape {
    int64_t num_elements = 0;  // dense variables
    int64_t row_width = 0;     // floats per row
  };

  explicit SyncRoundSum(std::vector<VariableShape> variables);

  SyncRoundSum(const SyncRoundSum&) = delete;
  SyncRoundSum& operator=(const SyncRoundSum&) = delete;

  // Adds `gradients` as the contribution of `slot` (>= 0; each slot at
  // most once per round, and the round's slots must be 0, 1, ... without
  // gaps for every contribution to be summed). The gradients are validated
  // by the caller and borrowed for this call only.
  void Add(int slot, absl::Span<const GradientRef> gradients);

  // Slots summed so far: every contribution of slots below it is in Sums().
  int summed_slots() const { return next_slot_; }

  // The sums, one GradientRef per variable that received a gradient (a
  // dense one and a rows one when both kinds arrived), borrowing this
  // object's buffers until the next Add or Clear.
  std::vector<GradientRef> Sums() const;

  // Forgets the round: sums and early contributions.
  void Clear();

 private:
  struct VariableSum {
    FloatBuffer dense;
    bool dense_set = false;
    absl::flat_hash_map<int64_t, int32_t> row_index;
    std::vector<int64_t> row_ids;
    std::vector<float> row_values;
  };
  void AddNow(absl::Span<const GradientRef> gradients);

  const std::vector<VariableShape> variables_;
  std::vector<VariableSum> sums_;
  int next_slot_ = 0;
  // Contributions that arrived before a lower slot's, by slot.
  std::map<int, GradientCopy> early_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_SYNC_ROUND_SUM_H_
