#include "common/model/dnnl/dnnl_status.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(DnnlStatusTest, MapsCodes) {
  EXPECT_EQ(DnnlErrorToStatus(dnnl::error(dnnl_invalid_arguments, "bad"), "x").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DnnlErrorToStatus(dnnl::error(dnnl_unimplemented, "no"), "x").code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(DnnlErrorToStatus(dnnl::error(dnnl_out_of_memory, "oom"), "x").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(DnnlErrorToStatus(dnnl::error(dnnl_runtime_error, "rt"), "x").code(),
            absl::StatusCode::kInternal);
}

TEST(DnnlStatusTest, CatchesErrorsFromRealCalls) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  // An inner product whose source and destination batch sizes disagree.
  absl::Status status = CallDnnl("inner product setup", [&] {
    using Tag = dnnl::memory::format_tag;
    using Type = dnnl::memory::data_type;
    dnnl::inner_product_forward::primitive_desc pd(
        dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training,
                                          dnnl::memory::desc({4, 3}, Type::f32, Tag::nc),
                                          dnnl::memory::desc({2, 3}, Type::f32, Tag::oi),
                                          dnnl::memory::desc({5, 2}, Type::f32, Tag::nc)),
        engine);
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("inner product setup"), absl::string_view::npos);
  EXPECT_TRUE(CallDnnl("nothing", [] {}).ok());
}

}  // namespace
}  // namespace pstrain
