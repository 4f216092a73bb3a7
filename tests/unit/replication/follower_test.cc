// The follower: truncation to the point its log agrees with the leader's, then fetching.
#include <gtest/gtest.h>

#include "brokerd/replication/replica.h"
#include "memory_log.h"

namespace brokerd::replication {
namespace {

using testing::MemoryLog;
using testing::partition;

struct Follower : ::testing::Test {
  MemoryLog log;
  LeaderEpochCache epochs;
  ReplicaConfig config{.broker_id = 2, .min_insync_replicas = 2};
  std::unique_ptr<Replica> r;
  int64_t now = 1000;

  // A log of epoch-1 entries [0,4) and epoch-2 entries [4,8), the high watermark at 5.
  void seed_divergent_log() {
    log.write(1, 4);
    epochs.assign(1, 0);
    log.write(2, 4);
    epochs.assign(2, 4);
  }
  // Epoch-1 entries [0,4) and epoch-3 entries [4,8), following leader 1 in epoch 4: it
  // asks where epoch 3 ended.
  void follow_after_epochs_1_and_3() {
    log.write(1, 4);
    epochs.assign(1, 0);
    log.write(3, 4);
    epochs.assign(3, 4);
    start(partition(1, 4, {1, 2, 3}));
    EXPECT_EQ(next<EpochEndRequest>().leader_epoch, 3);
  }
  void start(PartitionState s, Offset hw = 5) {
    r = std::make_unique<Replica>(config, log, epochs, hw);
    r->apply(s, now);
  }
  template <typename T>
  T next() {
    auto req = r->next_request(now);
    EXPECT_TRUE(req);
    EXPECT_TRUE(req && std::holds_alternative<T>(*req));
    return req && std::holds_alternative<T>(*req) ? std::get<T>(*req) : T{};
  }
};

TEST_F(Follower, AsksWhereItsLatestEpochEndedThenTruncatesThere) {
  seed_divergent_log();
  start(partition(1, 3, {1, 2, 3}));
  auto ask = next<EpochEndRequest>();
  EXPECT_EQ(ask.leader_epoch, 2);
  EXPECT_EQ(ask.current_leader_epoch, 3);
  EXPECT_FALSE(r->next_request(now)) << "one request at a time";
  r->handle_epoch_end_response({ErrorCode::none, 3, 2, 6}, now);
  EXPECT_EQ(log.end_offset(), 6);
  EXPECT_EQ(next<FetchRequest>().fetch_offset, 6);
}

TEST_F(Follower, AnEpochThisReplicaNeverSawIsNotTrustedForTheEnd) {
  follow_after_epochs_1_and_3();
  // The leader never had epoch 3; its epoch 2 (which this replica never saw) ended at 6.
  r->handle_epoch_end_response({ErrorCode::none, 4, 2, 6}, now);
  EXPECT_EQ(log.end_offset(), 4) << "cut back to the end of epoch 1 here";
  EXPECT_EQ(next<EpochEndRequest>().leader_epoch, 1) << "and asked again";
  r->handle_epoch_end_response({ErrorCode::none, 4, 1, 3}, now);
  EXPECT_EQ(log.end_offset(), 3);
  EXPECT_EQ(next<FetchRequest>().fetch_offset, 3);
}

TEST_F(Follower, ALateAnswerToAnEarlierQuestionDoesNotEndTheTruncation) {
  follow_after_epochs_1_and_3();
  r->handle_epoch_end_response({ErrorCode::none, 4, 2, 6}, now);  // cut back to epoch 1's end
  EXPECT_EQ(next<EpochEndRequest>().leader_epoch, 1);
  // A second answer to the first question (it was asked twice) arrives after that cut.
  r->handle_epoch_end_response({ErrorCode::none, 4, 2, 6}, now);
  EXPECT_FALSE(r->next_request(now)) << "the question about epoch 1 is still out";
  r->handle_epoch_end_response({ErrorCode::none, 4, 1, 3}, now);
  EXPECT_EQ(log.end_offset(), 3);
  EXPECT_EQ(next<FetchRequest>().fetch_offset, 3);
}

TEST_F(Follower, AppendsTheLeadersBatchesAndLearnsTheirEpochs) {
  start(partition(1, 3, {1, 2, 3}), 0);
  auto f = next<FetchRequest>();  // an empty log has nothing to ask about
  EXPECT_EQ(f.fetch_offset, 0);
  FetchResponse resp{ErrorCode::none, 3, 2, 0, {Batch{0, 1, 1, {}}, Batch{2, 2, 3, {}}}};
  r->handle_fetch_response(resp, now);
  EXPECT_EQ(log.end_offset(), 3);
  EXPECT_EQ(r->high_watermark(), 2);
  EXPECT_EQ(epochs.entries(), (std::vector<EpochEntry>{{1, 0}, {3, 2}}));
  EXPECT_TRUE(r->take_output().epoch_cache_changed);
}

TEST_F(Follower, ABatchThatDoesNotContinueTheLogIsNotAppended) {
  log.write(1, 4);
  epochs.assign(1, 0);
  start(partition(1, 3, {1, 2, 3}), 0);
  next<EpochEndRequest>();
  r->handle_epoch_end_response({ErrorCode::none, 3, 1, 4}, now);
  EXPECT_EQ(next<FetchRequest>().fetch_offset, 4);
  r->handle_fetch_response({ErrorCode::none, 3, 0, 0, {Batch{2, 6, 3, {}}}}, now);
  EXPECT_EQ(log.end_offset(), 4) << "a batch that starts before the log end";
  next<FetchRequest>();
  r->handle_fetch_response({ErrorCode::none, 3, 0, 0, {Batch{4, 4, 4, {}}}}, now);
  EXPECT_EQ(log.end_offset(), 4) << "an epoch newer than the leader's own";
}

// A compacted leader's log skips the offsets of the batches its cleaner removed: a follower
// whose end lies in such a gap is sent the next batch, and takes it.
TEST_F(Follower, ABatchPastAGapInACompactedLeadersLogIsAppended) {
  start(partition(1, 3, {1, 2, 3}), 0);
  EXPECT_EQ(next<FetchRequest>().fetch_offset, 0);
  r->handle_fetch_response({ErrorCode::none, 3, 9, 0, {Batch{3, 4, 3, {}}, Batch{7, 8, 3, {}}}}, now);
  EXPECT_EQ(log.end_offset(), 9);
  EXPECT_EQ(r->high_watermark(), 9);
  EXPECT_EQ(epochs.entries(), (std::vector<EpochEntry>{{3, 3}}));
}

// A batch the disk refused is not skipped: the next one would otherwise land past a hole
// (taken for a compaction gap) and this replica would differ from the leader for good.
TEST_F(Follower, ABatchThatWasNotWrittenStopsTheAppendsThere) {
  start(partition(1, 3, {1, 2, 3}), 0);
  EXPECT_EQ(next<FetchRequest>().fetch_offset, 0);
  log.fail_appends = true;
  r->handle_fetch_response({ErrorCode::none, 3, 4, 0, {Batch{0, 1, 3, {}}, Batch{2, 3, 3, {}}}}, now);
  log.fail_appends = false;
  EXPECT_EQ(log.end_offset(), 0);
  EXPECT_EQ(r->high_watermark(), 0);
  EXPECT_EQ(next<FetchRequest>().fetch_offset, 0);
}

TEST_F(Follower, AnswersOfAnOlderEpochAreIgnored) {
  seed_divergent_log();
  start(partition(1, 3, {1, 2, 3}));
  next<EpochEndRequest>();
  r->apply(partition(3, 4, {2, 3}), now);
  r->handle_epoch_end_response({ErrorCode::none, 3, 2, 4}, now);
  EXPECT_EQ(log.end_offset(), 8);
  EXPECT_EQ(next<EpochEndRequest>().current_leader_epoch, 4);
}

TEST_F(Follower, BehindTheLeadersLogStartItStartsOver) {
  log.write(1, 3);
  epochs.assign(1, 0);
  start(partition(1, 3, {1, 2, 3}), 3);
  next<EpochEndRequest>();
  r->handle_epoch_end_response({ErrorCode::none, 3, 1, 3}, now);
  next<FetchRequest>();
  FetchResponse resp;
  resp.error = ErrorCode::offset_out_of_range;
  resp.leader_epoch = 3;
  resp.log_start_offset = 50;
  r->handle_fetch_response(resp, now);
  EXPECT_EQ(log.start_offset(), 50);
  EXPECT_EQ(log.end_offset(), 50);
  EXPECT_EQ(next<FetchRequest>().fetch_offset, 50);
}

TEST_F(Follower, ARestartDropsEpochsPastTheRecoveredLogEnd) {
  log.write(1, 4);
  epochs.assign(1, 0);
  epochs.assign(2, 4);  // checkpointed, but the epoch-2 data was not flushed
  start(partition(1, 3, {1, 2, 3}), 9);
  EXPECT_EQ(epochs.entries(), (std::vector<EpochEntry>{{1, 0}}));
  EXPECT_EQ(r->high_watermark(), 4) << "never past the log end";
}

TEST_F(Follower, MovesItsLogStartWithTheLeadersUpToWhatIsCommitted) {
  start(partition(1, 3, {1, 2, 3}), 0);
  EXPECT_EQ(next<FetchRequest>().log_start_offset, 0);
  r->handle_fetch_response({ErrorCode::none, 3, 2, 4, {Batch{0, 4, 3, {}}}}, now);
  EXPECT_EQ(log.start_offset(), 2) << "the leader's start is past this replica's high watermark (2)";
  EXPECT_EQ(next<FetchRequest>().log_start_offset, 2);
  r->handle_fetch_response({ErrorCode::none, 3, 5, 4, {}}, now);
  EXPECT_EQ(log.start_offset(), 4);
  EXPECT_EQ(log.end_offset(), 5);
  EXPECT_EQ(next<FetchRequest>().log_start_offset, 4);
}

}  // namespace
}  // namespace brokerd::replication
