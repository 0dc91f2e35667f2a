#ifndef PSTRAIN_SERVER_PS_GRADIENT_COPY_H_
#define PSTRAIN_SERVER_PS_GRADIENT_COPY_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "server/ps/gradient_ref.h"

namespace pstrain {

// A push's gradients copied out of the buffers a GradientRef borrows for
// one call, so that they can be summed later: a sync round's contribution
// that arrived before the lower slots', a push staged for an agreed round.
// A dense gradient in segments is put together into one array. Immutable
// after construction; moving it keeps the buffers that refs() pointed to.
class GradientCopy {
 public:
  GradientCopy() = default;
  // `gradients` as validated by the shard (segments cover every element
  // of their variable exactly once).
  explicit GradientCopy(absl::Span<const GradientRef> gradients);

  GradientCopy(GradientCopy&&) = default;
  GradientCopy& operator=(GradientCopy&&) = default;
  GradientCopy(const GradientCopy&) = delete;
  GradientCopy& operator=(const GradientCopy&) = delete;

  // The copy as GradientRefs (no segments), borrowing this object's
  // buffers while it lives.
  std::vector<GradientRef> refs() const;

 private:
  struct Gradient {
    int variable = -1;
    bool rows = false;
    std::vector<int64_t> ids;
    std::vector<float> values;
  };
  std::vector<Gradient> gradients_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_GRADIENT_COPY_H_
