#include <gtest/gtest.h>

#include "raft_harness.h"

namespace brokerd::raft::testing {
namespace {

TEST(HandleFetchSnapshot, LeaderServesChunksAndChecksPosition) {
  Harness h;
  h.config.snapshot_chunk_bytes = 4;
  h.start();
  h.become_leader();
  const Epoch e = h.node->epoch();
  h.node->propose("a", h.now);
  h.flush();
  h.receive(2, FetchRequest{2, e, 2, e, 10});
  ASSERT_EQ(h.node->high_watermark(), 2);
  ASSERT_TRUE(h.node->take_snapshot(2, "0123456789"));
  const OffsetAndEpoch id{2, e};
  h.receive(3, FetchSnapshotRequest{3, e, id, 4, 4});
  auto r = h.sent<FetchSnapshotResponse>()[0].second;
  EXPECT_EQ(r.error, Errc::none);
  EXPECT_EQ(r.bytes, "4567");
  EXPECT_EQ(r.size, 10);
  h.receive(3, FetchSnapshotRequest{3, e, id, 11, 4});
  EXPECT_EQ(h.sent<FetchSnapshotResponse>()[0].second.error, Errc::position_out_of_range);
  h.receive(3, FetchSnapshotRequest{3, e, OffsetAndEpoch{1, e}, 0, 4});
  EXPECT_EQ(h.sent<FetchSnapshotResponse>()[0].second.error, Errc::snapshot_not_found);
}

TEST(HandleFetchSnapshot, FollowerInstallsSnapshotThenFetchesAfterIt) {
  Harness h;
  h.config.snapshot_chunk_bytes = 4;
  h.start();
  h.become_follower(2, 5);
  auto f = h.sent<FetchRequest>();
  FetchResponse r;
  r.leader_id = 2;
  r.leader_epoch = 5;
  r.snapshot_id = OffsetAndEpoch{20, 4};
  h.receive(2, r, f[0].first.correlation_id);
  auto s = h.sent<FetchSnapshotRequest>();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].second.position, 0);
  const std::string data = "snapshot-bytes";
  int64_t corr = s[0].first.correlation_id;
  int64_t pos = 0;
  for (int i = 0; i < 10 && pos < static_cast<int64_t>(data.size()); ++i) {
    FetchSnapshotResponse c{Errc::none, 2, 5, OffsetAndEpoch{20, 4},
                            static_cast<int64_t>(data.size()), pos, data.substr(pos, 4)};
    auto& o = h.receive(2, c, corr);
    pos += 4;
    if (pos < static_cast<int64_t>(data.size())) {
      auto next = h.sent<FetchSnapshotRequest>(o);
      ASSERT_EQ(next.size(), 1u);
      EXPECT_EQ(next[0].second.position, pos);
      corr = next[0].first.correlation_id;
    } else {
      ASSERT_TRUE(o.load_snapshot);
      EXPECT_EQ(o.load_snapshot->data, data);
      auto fetch = h.sent<FetchRequest>(o);
      ASSERT_EQ(fetch.size(), 1u);
      EXPECT_EQ(fetch[0].second.fetch_offset, 20);
      EXPECT_EQ(fetch[0].second.last_fetched_epoch, 4);
    }
  }
  EXPECT_EQ(h.log.start_offset(), 20);
  EXPECT_EQ(h.node->high_watermark(), 20);
  EXPECT_EQ(h.node->applied_offset(), 20);
  ASSERT_TRUE(h.snapshots.latest());
  // The snapshot is loaded again after a restart.
  h.restart();
  ASSERT_TRUE(h.last.load_snapshot);
  EXPECT_EQ(h.last.load_snapshot->id.offset, 20);
}

TEST(HandleFetchSnapshot, SnapshotNotFoundRestartsFromFetch) {
  Harness h;
  h.start();
  h.become_follower(2, 5);
  auto f = h.sent<FetchRequest>();
  FetchResponse r;
  r.leader_id = 2;
  r.leader_epoch = 5;
  r.snapshot_id = OffsetAndEpoch{20, 4};
  h.receive(2, r, f[0].first.correlation_id);
  auto s = h.sent<FetchSnapshotRequest>();
  FetchSnapshotResponse err;
  err.error = Errc::snapshot_not_found;
  err.leader_id = 2;
  err.leader_epoch = 5;
  h.receive(2, err, s[0].first.correlation_id);
  h.tick_until(h.now + 100);
  EXPECT_FALSE(h.sent<FetchRequest>().empty());
}

}  // namespace
}  // namespace brokerd::raft::testing
