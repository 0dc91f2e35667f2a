#ifndef PSTRAIN_COMMON_MODEL_ONNX_TESTDATA_PYTORCH_REFERENCE_H_
#define PSTRAIN_COMMON_MODEL_ONNX_TESTDATA_PYTORCH_REFERENCE_H_

// Test helpers: the tensors PyTorch computed for a fixture
// (make_fixtures.py writes them beside the .onnx file), and a comparison
// with pstrain's values.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace testing_util {

struct PyTorchTensor {
  std::vector<int64_t> dims;
  std::vector<float> values;
};

// The records of a .reference file by name (format in make_fixtures.py):
// x, y, r and grad/<initializer>; a graph of several inputs has, instead of
// x, one record input/<graph input name> for each (int64 ids as floats,
// exact below 2^24). Fails the test when the file is missing.
std::map<std::string, PyTorchTensor> ReadPyTorchReference(const std::string& path);

// Every got[i] within `tolerance` of want[i], absolute or relative; the
// failure names `what` and the first element that differs.
::testing::AssertionResult NearPyTorch(const float* got, const std::vector<float>& want,
                                       double tolerance, const std::string& what);

}  // namespace testing_util
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_TESTDATA_PYTORCH_REFERENCE_H_
