#include "common/status/grpc_status.h"

#include <utility>
#include <vector>

#include "common/status/error_reason.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

// Every code on both sides, paired by meaning (not by number), so a wrong
// entry in either switch fails here.
const std::vector<std::pair<absl::StatusCode, grpc::StatusCode>>& AllCodes() {
  static const auto* codes = new std::vector<std::pair<absl::StatusCode, grpc::StatusCode>>{
      {absl::StatusCode::kCancelled, grpc::StatusCode::CANCELLED},
      {absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN},
      {absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
      {absl::StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
      {absl::StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
      {absl::StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
      {absl::StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
      {absl::StatusCode::kAborted, grpc::StatusCode::ABORTED},
      {absl::StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
      {absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
      {absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL},
      {absl::StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
      {absl::StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS},
      {absl::StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
  };
  return *codes;
}

TEST(GrpcStatusTest, OkMapsToOkBothWays) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

TEST(GrpcStatusTest, EveryAbslCodeMapsToItsGrpcCodeWithTheMessage) {
  for (const auto& [absl_code, grpc_code] : AllCodes()) {
    grpc::Status converted = ToGrpcStatus(absl::Status(absl_code, "why it failed"));
    EXPECT_EQ(converted.error_code(), grpc_code) << absl::StatusCodeToString(absl_code);
    EXPECT_EQ(converted.error_message(), "why it failed");
  }
}

TEST(GrpcStatusTest, EveryGrpcCodeMapsToItsAbslCodeWithTheMessage) {
  for (const auto& [absl_code, grpc_code] : AllCodes()) {
    absl::Status converted = FromGrpcStatus(grpc::Status(grpc_code, "from the wire"));
    EXPECT_EQ(converted.code(), absl_code) << absl::StatusCodeToString(absl_code);
    EXPECT_EQ(converted.message(), "from the wire");
  }
}

TEST(GrpcStatusTest, UnknownGrpcCodeBecomesUnknown) {
  absl::Status converted =
      FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(99), "odd peer"));
  EXPECT_EQ(converted.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(converted.message(), "odd peer");
}

TEST(GrpcStatusTest, StatusProtoRoundTripsEveryCode) {
  for (const auto& [absl_code, unused] : AllCodes()) {
    absl::Status original(absl_code, "item failed");
    EXPECT_EQ(FromStatusProto(ToStatusProto(original)), original);
  }
  EXPECT_TRUE(FromStatusProto(ToStatusProto(absl::OkStatus())).ok());
}

TEST(GrpcStatusTest, StatusProtoWithUnknownCodeBecomesUnknown) {
  StatusProto proto;
  proto.set_code(1234);
  proto.set_message("from the future");
  absl::Status converted = FromStatusProto(proto);
  EXPECT_EQ(converted.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(converted.message(), "from the future");
}

TEST(GrpcStatusTest, TheReasonCrossesGrpcAndStatusProto) {
  const absl::Status sent =
      WithReason(absl::UnavailableError("every range is leased out"), ERROR_REASON_NO_FREE_LEASE);
  const absl::Status received = FromGrpcStatus(ToGrpcStatus(sent));
  EXPECT_EQ(received.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(received.message(), "every range is leased out");
  EXPECT_EQ(ReasonOf(received), ERROR_REASON_NO_FREE_LEASE);
  EXPECT_EQ(ReasonOf(FromStatusProto(ToStatusProto(sent))), ERROR_REASON_NO_FREE_LEASE);
  // Without a reason, nothing extra travels.
  EXPECT_TRUE(ToGrpcStatus(absl::UnavailableError("down")).error_details().empty());
  EXPECT_EQ(ReasonOf(FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down"))),
            ERROR_REASON_UNSPECIFIED);
}

TEST(GrpcStatusTest, ReasonsDecideWhoRegistersAgain) {
  EXPECT_TRUE(NeedsRegistration(
      WithReason(absl::NotFoundError("not registered"), ERROR_REASON_MEMBER_UNKNOWN)));
  EXPECT_TRUE(NeedsRegistration(WithReason(absl::AbortedError("lost"), ERROR_REASON_MEMBER_LOST)));
  // A NotFound about a lease is not about the caller.
  EXPECT_FALSE(NeedsRegistration(
      WithReason(absl::NotFoundError("lease 4 expired"), ERROR_REASON_LEASE_UNKNOWN)));
  EXPECT_FALSE(NeedsRegistration(absl::NotFoundError("no reason")));
  EXPECT_EQ(ReasonOf(WithReason(absl::OkStatus(), ERROR_REASON_JOB_ENDED)),
            ERROR_REASON_UNSPECIFIED);
}

TEST(GrpcStatusTest, AnOversizedMessageRefusalNamesTheFlag) {
  const absl::Status status = FromGrpcStatus(grpc::Status(
      grpc::StatusCode::RESOURCE_EXHAUSTED, "Received message larger than max (20 vs. 10)"));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "Received message larger than max (20 vs. 10) bytes; the limit is --max_message_mb, "
            "which every process of the cluster should share");
}

TEST(GrpcStatusTest, OtherResourceExhaustedMessagesAreKeptAsTheyAre) {
  const absl::Status status =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "the queue is full"));
  EXPECT_EQ(status.message(), "the queue is full");
}

}  // namespace
}  // namespace pstrain
