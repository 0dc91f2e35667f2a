#include "common/net/http_message.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

TEST(HttpMessageTest, ParsesTheRequestLineQueryAndHeaders) {
  absl::StatusOr<HttpRequest> request = ParseHttpRequestHead(
      "GET /jobs/mnist%2D1?after=12&state=RUNNING+x&flag HTTP/1.1\r\n"
      "Host: 127.0.0.1\r\nAuthorization:  Bearer abc \r\nX-Twice: 1\r\nx-twice: 2");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->method, "GET");
  EXPECT_EQ(request->path, "/jobs/mnist-1");
  EXPECT_EQ(request->query.at("after"), "12");
  EXPECT_EQ(request->query.at("state"), "RUNNING x");
  EXPECT_EQ(request->query.at("flag"), "");
  EXPECT_EQ(request->Header("authorization"), "Bearer abc");
  EXPECT_EQ(request->Header("x-twice"), "2");
  EXPECT_FALSE(request->Header("cookie").has_value());
}

TEST(HttpMessageTest, RefusesWhatIsNotAnHttpRequest) {
  for (const char* head : {"", "GET", "GET /", "GET nopath HTTP/1.1", "GET / SPDY/3",
                           "GET / HTTP/1.1\r\nno colon here", "GET /%zz HTTP/1.1"}) {
    absl::StatusOr<HttpRequest> request = ParseHttpRequestHead(head);
    EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument) << head;
  }
}

TEST(HttpMessageTest, PercentDecodesAndNamesABadEscape) {
  EXPECT_EQ(*PercentDecode("a%20b+c", false), "a b+c");
  EXPECT_EQ(*PercentDecode("a%20b+c", true), "a b c");
  absl::StatusOr<std::string> bad = PercentDecode("ab%4", false);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("offset 2"));
}

TEST(HttpMessageTest, FormatsTheStatusLineHeadersAndBody) {
  HttpResponse response = HttpResponse::Json(404, "{\"error\":\"no job x\"}");
  response.headers.push_back({"Cache-Control", "no-store"});
  EXPECT_EQ(FormatHttpResponse(response, false),
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
            "Content-Length: 20\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n"
            "{\"error\":\"no job x\"}");
  EXPECT_THAT(FormatHttpResponse(response, true), ::testing::EndsWith("no-store\r\n\r\n"));
}

}  // namespace
}  // namespace pstrain
