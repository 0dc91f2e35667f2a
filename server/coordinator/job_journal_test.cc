#include "server/coordinator/job_journal.h"

#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/test_env.h"
#include "common/checkpoint/whole_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

JobStatus Job(const std::string& job_id, JobState state) {
  JobStatus job;
  job.set_job_id(job_id);
  job.set_name(job_id.substr(0, job_id.rfind('-')));
  job.set_state(state);
  job.set_submit_unix_ms(1700000000123);
  job.mutable_spec()->set_name(job.name());
  job.mutable_spec()->mutable_checkpoint()->set_model_dir("/data/models/" + job.name());
  return job;
}

std::vector<std::string> Ids(const JournalContents& contents) {
  std::vector<std::string> ids;
  for (const JobStatus& job : contents.jobs) ids.push_back(job.job_id());
  return ids;
}

class JobJournalTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = NewTestDir(posix_) + "/state"; }

  // A journal over the folder, loaded, as a coordinator that starts.
  std::unique_ptr<JobJournal> OpenLoaded(JournalContents* contents = nullptr,
                                         JobJournalOptions options = {}) {
    absl::StatusOr<std::unique_ptr<JobJournal>> journal = JobJournal::Open(env_, dir_, options);
    EXPECT_TRUE(journal.ok()) << journal.status();
    if (!journal.ok()) return nullptr;
    absl::StatusOr<JournalContents> loaded = (*journal)->Load();
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    if (contents != nullptr && loaded.ok()) *contents = *std::move(loaded);
    return *std::move(journal);
  }

  PosixEnv posix_;
  TestEnv env_{&posix_};
  std::string dir_;
};

TEST_F(JobJournalTest, ANewCoordinatorFindsTheJobsInTheirOrderWithEverythingToRunThem) {
  std::unique_ptr<JobJournal> journal = OpenLoaded();
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->Record(Job("clicks-1", JOB_STATE_QUEUED)).ok());
  ASSERT_TRUE(journal->Record(Job("mnist-2", JOB_STATE_QUEUED)).ok());
  ASSERT_TRUE(journal->Record(Job("clicks-1", JOB_STATE_RUNNING)).ok());  // it started
  ASSERT_TRUE(journal->Record(Job("wide-and-deep-10", JOB_STATE_QUEUED)).ok());

  JournalContents contents;
  ASSERT_NE(OpenLoaded(&contents), nullptr);
  // By number, not by name: 10 after 2.
  EXPECT_THAT(Ids(contents), ElementsAre("clicks-1", "mnist-2", "wide-and-deep-10"));
  EXPECT_EQ(contents.jobs[0].state(), JOB_STATE_RUNNING);
  EXPECT_EQ(contents.jobs[1].state(), JOB_STATE_QUEUED);
  EXPECT_EQ(contents.jobs[0].spec().checkpoint().model_dir(), "/data/models/clicks");
  EXPECT_EQ(contents.jobs[0].submit_unix_ms(), 1700000000123);
  EXPECT_EQ(contents.last_job_number, 10);
  EXPECT_THAT(contents.set_aside, IsEmpty());
}

TEST_F(JobJournalTest, EndedJobsKeepTheirFinalStatusUpToTheLimitAndIdsAreNeverReused) {
  JobJournalOptions options;
  options.ended_jobs_kept = 2;
  std::unique_ptr<JobJournal> journal = OpenLoaded(nullptr, options);
  ASSERT_NE(journal, nullptr);
  for (int n = 1; n <= 4; ++n) {
    const std::string id = "clicks-" + std::to_string(n);
    ASSERT_TRUE(journal->Record(Job(id, JOB_STATE_RUNNING)).ok());
    JobStatus ended = Job(id, JOB_STATE_SUCCEEDED);
    ended.set_global_step(100 * n);
    ended.set_resumed_from_step(50);
    ASSERT_TRUE(journal->RecordEnd(ended).ok());
  }
  JournalContents contents;
  ASSERT_NE(OpenLoaded(&contents, options), nullptr);
  EXPECT_THAT(Ids(contents), ElementsAre("clicks-3", "clicks-4"));
  EXPECT_EQ(contents.jobs[1].state(), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(contents.jobs[1].global_step(), 400);
  EXPECT_EQ(contents.jobs[1].resumed_from_step(), 50);
  EXPECT_EQ(contents.last_job_number, 4);

  // With no record left at all, the counter still remembers.
  options.ended_jobs_kept = 0;
  journal = OpenLoaded(nullptr, options);
  ASSERT_TRUE(journal->RecordEnd(Job("clicks-5", JOB_STATE_STOPPED)).ok());
  ASSERT_NE(OpenLoaded(&contents, options), nullptr);
  EXPECT_THAT(contents.jobs, IsEmpty());
  EXPECT_EQ(contents.last_job_number, 5);
}

TEST_F(JobJournalTest, DamagedRecordsAreSetAsideWithTheirPathAndWhyAndTheRestLoads) {
  std::unique_ptr<JobJournal> journal = OpenLoaded();
  ASSERT_NE(journal, nullptr);
  for (const char* id : {"a-1", "a-2", "a-3", "a-4", "a-5"}) {
    ASSERT_TRUE(journal->Record(Job(id, JOB_STATE_QUEUED)).ok());
  }
  // A flipped byte, a file cut short, plain garbage, and a record of
  // another job under this one's name.
  const std::string path2 = journal->RecordPath("a-2");
  std::string text = *ReadWholeFile(posix_, path2, 1 << 20);
  text[text.size() / 2] ^= 0x20;
  ASSERT_TRUE(WriteFileAtomically(posix_, path2, text).ok());
  const std::string path3 = journal->RecordPath("a-3");
  text = *ReadWholeFile(posix_, path3, 1 << 20);
  ASSERT_TRUE(WriteFileAtomically(posix_, path3, text.substr(0, text.size() - 10)).ok());
  ASSERT_TRUE(WriteFileAtomically(posix_, journal->RecordPath("a-4"), "\x01\x02garbage").ok());
  ASSERT_TRUE(WriteFileAtomically(posix_, journal->RecordPath("a-5"),
                                  *ReadWholeFile(posix_, journal->RecordPath("a-1"), 1 << 20))
                  .ok());

  JournalContents contents;
  ASSERT_NE(OpenLoaded(&contents), nullptr);
  EXPECT_THAT(Ids(contents), ElementsAre("a-1"));
  ASSERT_THAT(contents.set_aside, SizeIs(4));
  EXPECT_THAT(contents.set_aside[0], AllOf(HasSubstr(path2), HasSubstr("checksum")));
  EXPECT_THAT(contents.set_aside[1], AllOf(HasSubstr(path3), HasSubstr("checksum")));
  EXPECT_THAT(contents.set_aside[2], HasSubstr("crc32c"));
  EXPECT_THAT(contents.set_aside[3], HasSubstr("holds job 'a-1'"));
  // Kept for a person to look at, out of the way of the next start.
  EXPECT_TRUE(*PathExists(posix_, path2 + ".damaged"));
  EXPECT_FALSE(*PathExists(posix_, path2));
  // The counter was not damaged: a-5's number is not given again.
  EXPECT_EQ(contents.last_job_number, 5);
  ASSERT_NE(OpenLoaded(&contents), nullptr);
  EXPECT_THAT(contents.set_aside, IsEmpty());
}

TEST_F(JobJournalTest, ADamagedCounterIsSetAsideAndRebuiltFromTheRecords) {
  std::unique_ptr<JobJournal> journal = OpenLoaded();
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->Record(Job("a-7", JOB_STATE_QUEUED)).ok());
  ASSERT_TRUE(WriteFileAtomically(posix_, dir_ + "/last_job_number", "seven\n").ok());
  JournalContents contents;
  ASSERT_NE(OpenLoaded(&contents), nullptr);
  EXPECT_EQ(contents.last_job_number, 7);
  EXPECT_THAT(contents.set_aside, ElementsAre(HasSubstr("not a job number")));
  EXPECT_EQ(*ReadWholeFile(posix_, dir_ + "/last_job_number", 100), "7\n");
}

TEST_F(JobJournalTest, AWriteACrashInterruptedLeavesTheOldRecord) {
  std::unique_ptr<JobJournal> journal = OpenLoaded();
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->Record(Job("a-1", JOB_STATE_QUEUED)).ok());
  env_.CrashOn(EnvOp::kRename, "job-1.pbtxt.tmp");
  EXPECT_FALSE(journal->Record(Job("a-1", JOB_STATE_RUNNING)).ok());
  env_.ClearFailures();
  JournalContents contents;
  ASSERT_NE(OpenLoaded(&contents), nullptr);
  ASSERT_THAT(Ids(contents), ElementsAre("a-1"));
  EXPECT_EQ(contents.jobs[0].state(), JOB_STATE_QUEUED);
  EXPECT_FALSE(*PathExists(posix_, journal->RecordPath("a-1") + ".tmp"));
}

TEST_F(JobJournalTest, ForgetRemovesTheRecord) {
  std::unique_ptr<JobJournal> journal = OpenLoaded();
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->Record(Job("a-1", JOB_STATE_QUEUED)).ok());
  ASSERT_TRUE(journal->Forget("a-1").ok());
  ASSERT_TRUE(journal->Forget("a-1").ok());  // twice is fine
  JournalContents contents;
  ASSERT_NE(OpenLoaded(&contents), nullptr);
  EXPECT_THAT(contents.jobs, IsEmpty());
  EXPECT_EQ(contents.last_job_number, 1);
}

TEST_F(JobJournalTest, RefusesWhatIsNotAJobRecord) {
  std::unique_ptr<JobJournal> journal = OpenLoaded();
  ASSERT_NE(journal, nullptr);
  EXPECT_EQ(journal->Record(Job("a-1", JOB_STATE_SUCCEEDED)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(journal->RecordEnd(Job("a-1", JOB_STATE_RUNNING)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(journal->Record(Job("nonumber", JOB_STATE_QUEUED)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(JobJournalTest, AFolderThatCannotBeWrittenIsFoundAtStart) {
  ASSERT_TRUE(WriteFileAtomically(posix_, dir_ + "-file", "x").ok());
  absl::StatusOr<std::unique_ptr<JobJournal>> under_a_file =
      JobJournal::Open(env_, dir_ + "-file/state");
  EXPECT_EQ(under_a_file.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(under_a_file.status().message(), HasSubstr(dir_ + "-file/state"));

  absl::StatusOr<std::unique_ptr<JobJournal>> journal = JobJournal::Open(env_, dir_);
  ASSERT_TRUE(journal.ok());
  env_.FailOn(EnvOp::kNewWritableFile, "last_job_number.tmp",
              absl::PermissionDeniedError("read-only file system"));
  absl::StatusOr<JournalContents> loaded = (*journal)->Load();
  EXPECT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("read-only"));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
