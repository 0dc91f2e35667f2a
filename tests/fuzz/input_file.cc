#include "tests/fuzz/input_file.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "glog/logging.h"

namespace pstrain {
namespace fuzz {

std::string WriteInputFile(const std::string& name, const uint8_t* data, size_t size) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/" + std::to_string(::getpid()) + "." + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  CHECK(out.good()) << "cannot write " << path;
  return path;
}

}  // namespace fuzz
}  // namespace pstrain
