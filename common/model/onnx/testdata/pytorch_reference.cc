#include "common/model/onnx/testdata/pytorch_reference.h"

#include <cmath>
#include <fstream>

namespace pstrain {
namespace testing_util {

std::map<std::string, PyTorchTensor> ReadPyTorchReference(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::map<std::string, PyTorchTensor> records;
  uint32_t length = 0;
  while (in.read(reinterpret_cast<char*>(&length), sizeof(length))) {
    std::string name(length, '\0');
    in.read(name.data(), length);
    uint32_t rank = 0;
    in.read(reinterpret_cast<char*>(&rank), sizeof(rank));
    PyTorchTensor& record = records[name];
    record.dims.resize(rank);
    in.read(reinterpret_cast<char*>(record.dims.data()), rank * sizeof(int64_t));
    int64_t n = 1;
    for (int64_t d : record.dims) n *= d;
    record.values.resize(n);
    in.read(reinterpret_cast<char*>(record.values.data()), n * sizeof(float));
  }
  return records;
}

::testing::AssertionResult NearPyTorch(const float* got, const std::vector<float>& want,
                                       double tolerance, const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i) {
    const double difference = std::abs(static_cast<double>(got[i]) - want[i]);
    if (difference > tolerance && difference > tolerance * std::abs(want[i])) {
      return ::testing::AssertionFailure()
             << what << "[" << i << "] is " << got[i] << ", PyTorch says " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace testing_util
}  // namespace pstrain
