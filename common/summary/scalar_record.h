#ifndef PSTRAIN_COMMON_SUMMARY_SCALAR_RECORD_H_
#define PSTRAIN_COMMON_SUMMARY_SCALAR_RECORD_H_

#include <cstdint>
#include <string>

namespace pstrain {

// One scalar summary: the value of `tag` (e.g. "loss") at a global step, as
// written to and read from event files and scalars.jsonl.
struct ScalarRecord {
  int64_t step = 0;
  double wall_time = 0;  // seconds since the Unix epoch
  std::string tag;
  double value = 0;  // event files hold it as a float
};

inline bool operator==(const ScalarRecord& a, const ScalarRecord& b) {
  return a.step == b.step && a.wall_time == b.wall_time && a.tag == b.tag && a.value == b.value;
}

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_SUMMARY_SCALAR_RECORD_H_
