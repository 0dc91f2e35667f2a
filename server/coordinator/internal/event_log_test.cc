#include "server/coordinator/internal/event_log.h"

#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace internal {
namespace {

TEST(EventLogTest, ReadersFollowFromTheirCursor) {
  EventLog<std::string> log(10);
  log.Append("a");
  log.Append("b");
  EventLog<std::string>::Read read = log.ReadOrWait(0, 10, [] {});
  EXPECT_EQ(read.events, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(read.next, 2u);
  EXPECT_EQ(read.wait_id, 0u);
  read = log.ReadOrWait(1, 10, [] {});
  EXPECT_EQ(read.events, (std::vector<std::string>{"b"}));
  read = log.ReadOrWait(0, 1, [] {});
  EXPECT_EQ(read.events, (std::vector<std::string>{"a"}));
  EXPECT_EQ(read.next, 1u);
}

TEST(EventLogTest, AnEmptyReadWaitsForTheNextAppendExactlyOnce) {
  EventLog<int> log(10);
  int woken = 0;
  EventLog<int>::Read read = log.ReadOrWait(0, 10, [&] { ++woken; });
  EXPECT_TRUE(read.events.empty());
  EXPECT_NE(read.wait_id, 0u);
  EXPECT_EQ(woken, 0);
  log.Append(1);
  EXPECT_EQ(woken, 1);
  log.Append(2);
  EXPECT_EQ(woken, 1);
  log.CancelWait(read.wait_id);  // already fired: nothing happens
  EXPECT_EQ(woken, 1);
}

TEST(EventLogTest, CancelWaitFiresAWaitingReader) {
  EventLog<int> log(10);
  int woken = 0;
  EventLog<int>::Read read = log.ReadOrWait(0, 10, [&] { ++woken; });
  log.CancelWait(read.wait_id);
  EXPECT_EQ(woken, 1);
  log.Append(1);
  EXPECT_EQ(woken, 1);
}

TEST(EventLogTest, CloseEndsReadersAfterTheyDrainTheLog) {
  EventLog<int> log(10);
  int woken = 0;
  log.ReadOrWait(0, 10, [&] { ++woken; });
  log.Append(7);
  log.Close();
  log.Append(8);  // ignored once closed
  EventLog<int>::Read read = log.ReadOrWait(0, 10, [] {});
  EXPECT_EQ(read.events, (std::vector<int>{7}));
  EXPECT_FALSE(read.closed);
  read = log.ReadOrWait(read.next, 10, [] {});
  EXPECT_TRUE(read.events.empty());
  EXPECT_TRUE(read.closed);
  EXPECT_EQ(read.wait_id, 0u);
  EXPECT_EQ(woken, 1);
}

TEST(EventLogTest, ASlowReaderSkipsWhatTheLogNoLongerHolds) {
  EventLog<int> log(3);
  for (int i = 0; i < 5; ++i) log.Append(i);
  EXPECT_EQ(log.end(), 5u);
  EventLog<int>::Read read = log.ReadOrWait(0, 10, [] {});
  EXPECT_EQ(read.skipped, 2u);
  EXPECT_EQ(read.events, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(read.next, 5u);
}

}  // namespace
}  // namespace internal
}  // namespace coordinator
}  // namespace pstrain
