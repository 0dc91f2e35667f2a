#ifndef PSTRAIN_TESTS_FUZZ_QUIET_LOGS_H_
#define PSTRAIN_TESTS_FUZZ_QUIET_LOGS_H_

// The code under fuzzing logs every input it refuses (glog) and protobuf
// logs every string field that is not UTF-8; at thousands of inputs a
// second that output costs more than the fuzzing. Fatal errors (CHECK)
// still print.

#include "glog/logging.h"
#include "google/protobuf/stubs/logging.h"

namespace pstrain {
namespace fuzz {

inline void QuietLogs() {
  FLAGS_minloglevel = google::GLOG_FATAL;
  google::protobuf::SetLogHandler(nullptr);
}

}  // namespace fuzz
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_FUZZ_QUIET_LOGS_H_
