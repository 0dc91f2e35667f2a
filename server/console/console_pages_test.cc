#include "server/console/console_pages.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace console {
namespace {

using ::testing::HasSubstr;

HttpResponse Get(const std::string& path) {
  HttpRequest request;
  request.method = "GET";
  request.path = path;
  return AnswerConsolePage(request);
}

std::string HeaderOf(const HttpResponse& response, const std::string& name) {
  for (const auto& [header, value] : response.headers) {
    if (header == name) return value;
  }
  return "";
}

TEST(ConsolePagesTest, EveryPageIsTheDocumentThatLoadsTheScript) {
  const HttpResponse jobs = Get("/");
  ASSERT_EQ(jobs.status, 200);
  EXPECT_EQ(jobs.content_type, "text/html; charset=utf-8");
  EXPECT_THAT(jobs.body, HasSubstr("/console.js"));
  EXPECT_THAT(jobs.body, HasSubstr("/console.css"));
  for (const char* path : {"/cluster", "/jobs/fashion-mnist-mlp-1"}) {
    EXPECT_EQ(Get(path).body, jobs.body) << path;
  }
  const HttpResponse script = Get("/console.js");
  ASSERT_EQ(script.status, 200);
  EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
  EXPECT_THAT(script.body, HasSubstr("/api/jobs"));
  EXPECT_EQ(Get("/console.css").content_type, "text/css; charset=utf-8");
}

TEST(ConsolePagesTest, EveryAnswerKeepsOtherOriginsOut) {
  for (const char* path : {"/", "/console.js", "/missing"}) {
    const HttpResponse response = Get(path);
    EXPECT_THAT(HeaderOf(response, "Content-Security-Policy"), HasSubstr("default-src 'self'"))
        << path;
    EXPECT_THAT(HeaderOf(response, "Content-Security-Policy"), HasSubstr("frame-ancestors 'none'"))
        << path;
    EXPECT_EQ(HeaderOf(response, "X-Content-Type-Options"), "nosniff") << path;
  }
}

TEST(ConsolePagesTest, AnUnknownPathIsA404PageNamingItEscaped) {
  for (const char* path : {"/jobs", "/jobs/a/b", "/etc/passwd", "/<script>"}) {
    const HttpResponse response = Get(path);
    EXPECT_EQ(response.status, 404) << path;
    EXPECT_EQ(response.content_type, "text/html; charset=utf-8");
  }
  EXPECT_THAT(Get("/<script>").body, HasSubstr("There is no page /&lt;script&gt;"));
  HttpRequest post;
  post.method = "POST";
  post.path = "/";
  EXPECT_EQ(AnswerConsolePage(post).status, 405);
}

}  // namespace
}  // namespace console
}  // namespace pstrain
