#ifndef PSTRAIN_TESTS_MACHINE_REQUIREMENT_H_
#define PSTRAIN_TESTS_MACHINE_REQUIREMENT_H_

// Tests that need something of the machine beyond scripts/setup.sh's
// packages (root, a kubectl that renders kustomize v4): where it is
// missing, the test is skipped with the reason printed, so that `bazel
// test //...` passes on a contributor's machine and says what it did not
// run. CI has everything and runs every test: under CI (CI=true, passed
// through by .bazelrc) the lack fails the test instead.

#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace testing_util {

// Whether the tests run under CI (the CI variable is "true").
bool UnderCi();

}  // namespace testing_util
}  // namespace pstrain

// In a test body or a SetUp (it returns): skips the test, or fails it
// under CI, with `reason` when `missing_reason` (a std::string) is not
// empty.
#define PSTRAIN_REQUIRE_MACHINE(missing_reason)                                      \
  do {                                                                               \
    const std::string pstrain_missing = (missing_reason);                            \
    if (!pstrain_missing.empty()) {                                                  \
      if (::pstrain::testing_util::UnderCi()) {                                      \
        GTEST_FAIL() << pstrain_missing << " (CI runs every test, so this fails)";    \
      }                                                                              \
      GTEST_SKIP() << "skipped: " << pstrain_missing;                                \
    }                                                                                \
  } while (false)

#endif  // PSTRAIN_TESTS_MACHINE_REQUIREMENT_H_
