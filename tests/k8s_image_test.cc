// The image (deploy/docker) that the Kubernetes manifests run, checked
// against the binaries built here: no container engine is needed.

#include <map>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/binary_locator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/k8s_container.h"
#include "tests/k8s_manifest.h"

namespace pstrain {
namespace {

using k8s_testing::kBinaries;
using k8s_testing::ReadRunfile;
using k8s_testing::RunShell;
using ::testing::Contains;
using ::testing::HasSubstr;

// The runtime stage of the image installs, by name, the Debian package of
// every shared library the built binaries load.
TEST(ImageTest, RuntimeStageInstallsEveryLibraryTheBinariesLoad) {
  const std::string dockerfile = ReadRunfile("deploy/docker/Dockerfile");
  ASSERT_FALSE(dockerfile.empty());
  const size_t begin = dockerfile.find("# runtime-packages-begin");
  const size_t end = dockerfile.find("# runtime-packages-end");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  ASSERT_LT(dockerfile.find("AS runtime"), begin) << "the list belongs to the runtime stage";
  std::set<std::string> installed;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(dockerfile).substr(begin, end - begin), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumeSuffix(&line, " \\") || absl::StrContains(line, ' ')) continue;
    installed.insert(std::string(line));
  }
  ASSERT_GE(installed.size(), 10u)
      << "packages read from the Dockerfile: " << absl::StrJoin(installed, " ");

  std::set<std::string> libraries;
  for (const char* binary : kBinaries) {
    EXPECT_THAT(dockerfile, HasSubstr(absl::StrCat("/", binary, " ")))
        << "the image does not copy " << binary;
    absl::StatusOr<std::string> path = LocateBinary(binary, "");
    ASSERT_TRUE(path.ok()) << path.status();
    absl::StatusOr<std::string> ldd = RunShell("ldd " + *path);
    ASSERT_TRUE(ldd.ok()) << ldd.status();
    EXPECT_THAT(*ldd, testing::Not(HasSubstr("not found"))) << binary;
    for (absl::string_view line : absl::StrSplit(*ldd, '\n')) {
      // "\tlibgrpc++.so.1.51 => /lib/x86_64-linux-gnu/libgrpc++.so.1.51 (0x...)"
      const size_t arrow = line.find("=> /");
      if (arrow == absl::string_view::npos) continue;
      libraries.insert(std::string(line.substr(arrow + 3, line.find(" (", arrow) - arrow - 3)));
    }
  }
  ASSERT_GE(libraries.size(), 10u);
  // The owning package of each, one dpkg run per spelling of the path
  // (/usr-merge: /lib/x86_64-linux-gnu is /usr/lib/x86_64-linux-gnu).
  // Prints "package: path" per library, or "NONE: path".
  absl::StatusOr<std::string> owners = RunShell(absl::StrCat(
      "for p in ", absl::StrJoin(libraries, " "),
      "; do "
      "o=$(dpkg -S \"$p\" 2>/dev/null || dpkg -S \"$(readlink -f \"$p\")\" 2>/dev/null || "
      "dpkg -S \"/usr$p\" 2>/dev/null || dpkg -S \"${p#/usr}\" 2>/dev/null) || o=\"NONE: $p\"; "
      "echo \"$o\" | head -n 1; done"));
  ASSERT_TRUE(owners.ok()) << owners.status();
  std::map<std::string, std::set<std::string>> needed;  // package -> libraries
  for (absl::string_view line : absl::StrSplit(*owners, '\n', absl::SkipEmpty())) {
    // "libgrpc++1.51:amd64: /usr/lib/x86_64-linux-gnu/libgrpc++.so.1.51"
    const size_t colon = line.find(':');
    ASSERT_NE(colon, absl::string_view::npos) << line;
    const std::string package(line.substr(0, colon));
    EXPECT_NE(package, "NONE") << "no Debian package owns" << line.substr(colon + 1);
    needed[package].insert(std::string(absl::StripAsciiWhitespace(line.substr(line.rfind(' ')))));
  }
  ASSERT_GE(needed.size(), 5u);
  for (const auto& [package, libraries] : needed) {
    EXPECT_THAT(installed, Contains(package))
        << "the runtime stage does not install " << package << ", which provides "
        << absl::StrJoin(libraries, ", ");
  }
}

}  // namespace
}  // namespace pstrain
