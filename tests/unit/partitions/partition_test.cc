#include "brokerd/partitions/partition.h"

#include <gtest/gtest.h>

#include <fstream>

#include "unit/storage/storage_test_util.h"

namespace brokerd::partitions {
namespace {

using storage::Log;
using storage::LogConfig;
using storage::testing::TempDir;

constexpr int64_t kNow = storage::testing::kNow;

std::unique_ptr<Partition> open_partition(const std::filesystem::path& dir, bool clean_shutdown, int64_t hw = 0) {
  replication::ReplicaConfig cfg;
  cfg.broker_id = 1;
  return std::make_unique<Partition>(TopicPartition{"t", 0}, protocol::Uuid{}, Log::open(dir, LogConfig{},
                                                                                          clean_shutdown),
                                     cfg, hw);
}

void append_in_epoch(Log& log, int32_t epoch) {
  Bytes b = storage::testing::make_batch(2, 10, 1000);
  ASSERT_EQ(log.append(b, epoch, kNow).error, protocol::ErrorCode::none);
}

// The leader-epoch file is synced only with flushes: after a crash it may lack the epochs
// of the unflushed tail, which recovery finds again in the batch headers.
TEST(Partition, EpochsOfTheRecoveredTailAreAddedToTheCheckpointedOnes) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, LogConfig{}, true);
    append_in_epoch(*log, 2);
    append_in_epoch(*log, 2);
    append_in_epoch(*log, 5);
    log->set_leader_epochs("0\n1\n2 0\n");  // the file as it was synced: epoch 5 not yet in it
  }
  auto p = open_partition(path, false);
  using replication::EpochEntry;
  EXPECT_EQ(p->replica().epochs().entries(), (std::vector<EpochEntry>{{2, 0}, {5, 4}}));
  // ...and the file says so now.
  p.reset();
  auto log = Log::open(path, LogConfig{}, true);
  EXPECT_EQ(log->read_leader_epochs(), "0\n2\n2 0\n5 4\n");
}

TEST(Partition, ACleanStartTrustsTheEpochFile) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, LogConfig{}, true);
    append_in_epoch(*log, 2);
    append_in_epoch(*log, 3);
    log->set_leader_epochs("0\n2\n2 0\n3 2\n");
  }
  auto p = open_partition(path, true);
  using replication::EpochEntry;
  EXPECT_EQ(p->replica().epochs().entries(), (std::vector<EpochEntry>{{2, 0}, {3, 2}}));
}

TEST(Partition, AnUnreadableEpochFileIsRebuiltFromTheRecoveredBatches) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, LogConfig{}, true);
    append_in_epoch(*log, 4);
    append_in_epoch(*log, 6);
    log->set_leader_epochs("torn");
  }
  auto p = open_partition(path, false);
  using replication::EpochEntry;
  EXPECT_EQ(p->replica().epochs().entries(), (std::vector<EpochEntry>{{4, 0}, {6, 2}}));
}

// The checkpointed high watermark is where a restarted replica starts, within its log (a
// crash may have cut the log below what the checkpoint recorded).
TEST(Partition, StartsFromTheCheckpointedHighWatermarkWithinItsLog) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, LogConfig{}, true);
    for (int i = 0; i < 3; ++i) append_in_epoch(*log, 1);  // [0, 6)
  }
  EXPECT_EQ(open_partition(path, true, 4)->high_watermark(), 4);
  EXPECT_EQ(open_partition(path, true, 9)->high_watermark(), 6);
  EXPECT_EQ(open_partition(path, true)->high_watermark(), 0);
}

}  // namespace
}  // namespace brokerd::partitions
