#ifndef PSTRAIN_TESTS_TEST_CERTIFICATES_H_
#define PSTRAIN_TESTS_TEST_CERTIFICATES_H_

#include <string>

namespace pstrain {

// A throw-away CA and two certificates it signs, for 127.0.0.1 and
// localhost, made with openssl under `dir`: ca.crt, server.crt and
// server.key (what the cluster's processes serve, and present to each
// other as client certificate), client.crt and client.key (the `pstrain`
// client's). Valid for a day. A failure is a fatal test failure: call it
// under ASSERT_NO_FATAL_FAILURE.
void MakeTestCertificates(const std::string& dir);

}  // namespace pstrain

#endif  // PSTRAIN_TESTS_TEST_CERTIFICATES_H_
