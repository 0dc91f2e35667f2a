#include "tests/test_certificates.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/process/child_process.h"
#include "gtest/gtest.h"

namespace pstrain {

void MakeTestCertificates(const std::string& dir) {
  std::ofstream(dir + "/san.cnf") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  std::vector<std::vector<std::string>> commands = {
      {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", dir + "/ca.key", "-out",
       dir + "/ca.crt", "-days", "1", "-subj", "/CN=pstrain test CA"},
  };
  for (const char* name : {"server", "client"}) {
    const std::string stem = dir + "/" + name;
    commands.push_back({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", stem + ".key", "-out",
                        stem + ".csr", "-subj", absl::StrCat("/CN=pstrain ", name)});
    commands.push_back({"x509", "-req", "-in", stem + ".csr", "-CA", dir + "/ca.crt", "-CAkey",
                        dir + "/ca.key", "-CAcreateserial", "-out", stem + ".crt", "-days", "1",
                        "-extfile", dir + "/san.cnf"});
  }
  const std::string log = dir + "/openssl.log";
  for (const auto& args : commands) {
    absl::StatusOr<std::unique_ptr<ChildProcess>> openssl =
        ChildProcess::Start({"/usr/bin/openssl", args, {}, log});
    ASSERT_TRUE(openssl.ok()) << openssl.status();
    absl::StatusOr<ExitStatus> ended = (*openssl)->Wait(absl::Seconds(60));
    ASSERT_TRUE(ended.ok()) << "openssl " << absl::StrJoin(args, " ") << ": " << ended.status();
    std::stringstream printed;
    printed << std::ifstream(log).rdbuf();
    ASSERT_TRUE(ended->ok()) << "openssl " << absl::StrJoin(args, " ") << ": " << ended->ToString()
                             << "\n"
                             << printed.str();
  }
}

}  // namespace pstrain
