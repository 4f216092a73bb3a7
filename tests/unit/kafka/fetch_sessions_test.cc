#include "brokerd/kafka/fetch_sessions.h"

#include <gtest/gtest.h>

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;

SessionPartition part(const std::string& topic, int32_t p, int64_t offset) {
  SessionPartition s;
  s.key = {topic, {}, p};
  s.fetch_offset = offset;
  s.max_bytes = 1 << 20;
  return s;
}

FetchSessionRequest request(int32_t id, int32_t epoch, std::vector<SessionPartition> parts,
                            std::vector<SessionKey> forgotten = {}) {
  FetchSessionRequest r;
  r.session_id = id;
  r.epoch = epoch;
  r.partitions = std::move(parts);
  r.forgotten = std::move(forgotten);
  return r;
}

PartitionAnswer quiet(int64_t hw) { return {false, ErrorCode::none, hw, hw, 0}; }
PartitionAnswer data(int64_t hw) { return {true, ErrorCode::none, hw, hw, 0}; }

std::vector<std::pair<std::string, int32_t>> keys(const FetchSessionCache::Context& c) {
  std::vector<std::pair<std::string, int32_t>> out;
  for (const auto& p : c.partitions) out.emplace_back(p.key.topic, p.key.partition);
  return out;
}

TEST(FetchSessions, EpochMinusOneIsAFullFetchWithoutASession) {
  FetchSessionCache cache(10);
  auto c = cache.begin(request(0, -1, {part("a", 0, 5), part("a", 1, 7)}), 0);
  EXPECT_EQ(c.error, ErrorCode::none);
  EXPECT_EQ(c.session_id, 0);
  EXPECT_FALSE(c.incremental);
  EXPECT_EQ(keys(c).size(), 2u);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(FetchSessions, AnIncrementalFetchReadsEveryPartitionAndAnswersOnlyNews) {
  FetchSessionCache cache(10);
  auto full = cache.begin(request(0, 0, {part("a", 0, 5), part("a", 1, 7), part("b", 0, 0)}), 0);
  ASSERT_NE(full.session_id, 0);
  EXPECT_FALSE(full.incremental);
  // The full answer includes every partition and is remembered.
  EXPECT_EQ(cache.finish(full, {quiet(5), quiet(7), quiet(0)}, 0), (std::vector<bool>{true, true, true}));

  // Epoch 1 names nothing: every partition is read at its cached offset...
  auto inc = cache.begin(request(full.session_id, 1, {}), 10);
  ASSERT_EQ(inc.error, ErrorCode::none);
  EXPECT_TRUE(inc.incremental);
  ASSERT_EQ(keys(inc).size(), 3u);
  EXPECT_EQ(inc.partitions[0].fetch_offset, 5);
  // ...and only the one with records, and the one whose high watermark moved, are answered.
  EXPECT_EQ(cache.finish(inc, {data(9), quiet(8), quiet(0)}, 10), (std::vector<bool>{true, true, false}));
  // A partition that returned records moves to the end of the session.
  auto next = cache.begin(request(full.session_id, 2, {part("a", 0, 9)}), 20);
  EXPECT_EQ(keys(next), (std::vector<std::pair<std::string, int32_t>>{{"a", 1}, {"b", 0}, {"a", 0}}));
  EXPECT_EQ(next.partitions[2].fetch_offset, 9);
  // Nothing new: an empty answer.
  EXPECT_EQ(cache.finish(next, {quiet(8), quiet(0), quiet(9)}, 20), (std::vector<bool>{false, false, false}));
}

TEST(FetchSessions, PartitionsAreAddedAndForgotten) {
  FetchSessionCache cache(10);
  auto full = cache.begin(request(0, 0, {part("a", 0, 0), part("a", 1, 0)}), 0);
  cache.finish(full, {quiet(0), quiet(0)}, 0);
  auto inc = cache.begin(request(full.session_id, 1, {part("c", 3, 4)}, {{"a", {}, 0}}), 1);
  EXPECT_EQ(keys(inc), (std::vector<std::pair<std::string, int32_t>>{{"a", 1}, {"c", 3}}));
  // A new partition is always answered once, even with nothing in it.
  EXPECT_EQ(cache.finish(inc, {quiet(0), quiet(4)}, 1), (std::vector<bool>{false, true}));
  EXPECT_EQ(cache.partitions(), 2u);
}

TEST(FetchSessions, WrongEpochsAndUnknownSessionsAreRefused) {
  FetchSessionCache cache(10);
  auto full = cache.begin(request(0, 0, {part("a", 0, 0)}), 0);
  EXPECT_EQ(cache.begin(request(full.session_id, 2, {}), 1).error, ErrorCode::invalid_fetch_session_epoch);
  EXPECT_EQ(cache.begin(request(full.session_id + 1, 1, {}), 1).error, ErrorCode::fetch_session_id_not_found);
  EXPECT_EQ(cache.begin(request(0, 1, {}), 1).error, ErrorCode::fetch_session_id_not_found);
  EXPECT_EQ(cache.begin(request(full.session_id, -2, {}), 1).error, ErrorCode::invalid_fetch_session_epoch);
  // The refused requests did not use up the epoch.
  EXPECT_EQ(cache.begin(request(full.session_id, 1, {}), 1).error, ErrorCode::none);
  // A session opened with topic names cannot go on with topic ids.
  auto ids = request(full.session_id, 2, {});
  ids.topic_ids = true;
  EXPECT_EQ(cache.begin(ids, 1).error, ErrorCode::fetch_session_topic_id_error);
  // Epoch -1 closes it.
  cache.begin(request(full.session_id, -1, {part("a", 0, 0)}), 2);
  EXPECT_EQ(cache.begin(request(full.session_id, 2, {}), 3).error, ErrorCode::fetch_session_id_not_found);
}

TEST(FetchSessions, AFullCacheEvictsIdleSessionsThenSmallerOnes) {
  FetchSessionCache cache(2);
  auto one = cache.begin(request(0, 0, {part("a", 0, 0)}), 0);
  auto three = cache.begin(request(0, 0, {part("a", 0, 0), part("a", 1, 0), part("a", 2, 0)}), 0);
  ASSERT_NE(one.session_id, 0);
  ASSERT_NE(three.session_id, 0);
  // Full, and nobody idle long enough: a session of two takes the place of the one of one.
  auto two = cache.begin(request(0, 0, {part("b", 0, 0), part("b", 1, 0)}), 1000);
  EXPECT_NE(two.session_id, 0);
  EXPECT_EQ(cache.begin(request(one.session_id, 1, {}), 1000).error, ErrorCode::fetch_session_id_not_found);
  // A session of one displaces nobody: it gets no session (id 0), a full fetch all the same.
  auto small = cache.begin(request(0, 0, {part("c", 0, 0)}), 2000);
  EXPECT_EQ(small.session_id, 0);
  EXPECT_EQ(keys(small).size(), 1u);
  // Once a session has been idle for two minutes, any new one may take its place.
  cache.begin(request(two.session_id, 1, {}), FetchSessionCache::kEvictableAfterMs);
  auto later = cache.begin(request(0, 0, {part("d", 0, 0)}), FetchSessionCache::kEvictableAfterMs + 1);
  EXPECT_NE(later.session_id, 0);
  EXPECT_EQ(cache.begin(request(three.session_id, 1, {}), FetchSessionCache::kEvictableAfterMs + 1).error,
            ErrorCode::fetch_session_id_not_found);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(FetchSessions, NoSlotsDeclinesEverySession) {
  FetchSessionCache cache(0);
  auto c = cache.begin(request(0, 0, {part("a", 0, 0)}), 0);
  EXPECT_EQ(c.error, ErrorCode::none);
  EXPECT_EQ(c.session_id, 0);
}

}  // namespace
}  // namespace brokerd::kafka
