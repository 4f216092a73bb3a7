// Offsets sent to transactions (TxnOffsetCommit): pending per producer until the marker on the
// offsets partition, unstable to fetches that ask for stable offsets, superseded by a later
// plain commit, and rebuilt the same way when the partition is replayed.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <variant>

#include "group/group_partition.h"

namespace brokerd::group {
namespace {

using E = ErrorCode;

// One log entry: a plain record, a transactional record of a producer, or a marker.
struct Entry {
  OffsetsRecord record;
  int64_t producer_id = -1;  // >= 0: transactional
  std::optional<bool> marker;  // a COMMIT (true) or ABORT (false) of producer_id
};

struct TxnHarness {
  TxnHarness() {
    make();
    part->finish_loading();
  }
  void make() {
    part = std::make_unique<GroupPartition>(
        io.get_executor(), 0, Settings{},
        [this](std::vector<OffsetsRecord> records) {
          for (auto& r : records) log.push_back({std::move(r), -1, std::nullopt});
          return E::none;
        },
        [] { return int64_t{1000}; });
    part->set_txn_appender([this](std::vector<OffsetsRecord> records, int64_t pid, int16_t) {
      if (fail != E::none) return fail;
      for (auto& r : records) log.push_back({std::move(r), pid, std::nullopt});
      return E::none;
    });
  }
  void marker(int64_t pid, bool commit) {
    log.push_back({{}, pid, commit});
    part->complete_txn(pid, commit);
  }
  void reload() {
    part->shutdown();
    make();
    for (const auto& e : log) {
      if (e.marker) {
        part->replay_marker(e.producer_id, *e.marker);
        continue;
      }
      std::optional<std::span<const std::byte>> v;
      if (e.record.value) v = std::span<const std::byte>(*e.record.value);
      if (e.producer_id >= 0) EXPECT_TRUE(part->replay_txn(e.record.key, v, e.producer_id));
      else part->replay(e.record.key, v);
    }
    part->finish_loading();
  }
  int64_t committed(const std::string& group, const OffsetKey& k, bool stable = false, E* error = nullptr) {
    auto f = part->fetch(group, std::vector<OffsetKey>{k}, stable);
    if (error) *error = f.offsets.at(0).error;
    return f.offsets.at(0).entry.offset;
  }

  boost::asio::io_context io;
  std::unique_ptr<GroupPartition> part;
  std::vector<Entry> log;
  E fail = E::none;
};

TxnCommitRequest txn(const std::string& group, int64_t pid, int64_t offset, const std::string& topic = "t") {
  TxnCommitRequest r;
  r.group_id = group;
  r.producer_id = pid;
  r.producer_epoch = 0;
  r.offsets.push_back({OffsetKey{topic, 0}, OffsetEntry{offset, -1, "", -1, -1}});
  return r;
}

TEST(TxnOffsets, PendingUntilTheCommitMarker) {
  TxnHarness h;
  EXPECT_EQ(h.part->txn_commit(txn("g", 7, 42)), std::vector<E>{E::none});
  EXPECT_EQ(h.committed("g", {"t", 0}), -1) << "not visible before the transaction commits";
  E error = E::none;
  EXPECT_EQ(h.committed("g", {"t", 0}, true, &error), -1);
  EXPECT_EQ(error, E::unstable_offset_commit);
  EXPECT_EQ(h.part->pending_txn_offsets(), 1u);
  h.marker(7, true);
  EXPECT_EQ(h.committed("g", {"t", 0}, true, &error), 42);
  EXPECT_EQ(error, E::none);
  EXPECT_EQ(h.part->pending_txn_offsets(), 0u);
}

TEST(TxnOffsets, AbortDropsThem) {
  TxnHarness h;
  CommitRequest plain{"g", -1, "", std::nullopt, {{{"t", 0}, {5, -1, "", -1, -1}}}};
  ASSERT_EQ(h.part->commit(plain), std::vector<E>{E::none});
  h.part->txn_commit(txn("g", 7, 42));
  h.marker(7, false);
  EXPECT_EQ(h.committed("g", {"t", 0}, true), 5);
  // A marker of another producer changes nothing.
  h.part->txn_commit(txn("g", 8, 50));
  h.marker(9, true);
  EXPECT_EQ(h.committed("g", {"t", 0}), 5);
  h.marker(8, true);
  EXPECT_EQ(h.committed("g", {"t", 0}), 50);
}

TEST(TxnOffsets, ALaterPlainCommitWins) {
  TxnHarness h;
  h.part->txn_commit(txn("g", 7, 42));
  CommitRequest plain{"g", -1, "", std::nullopt, {{{"t", 0}, {60, -1, "", -1, -1}}}};
  ASSERT_EQ(h.part->commit(plain), std::vector<E>{E::none});
  h.marker(7, true);
  EXPECT_EQ(h.committed("g", {"t", 0}), 60);
}

TEST(TxnOffsets, ReplayRebuildsCommittedAbortedAndOpenTransactions) {
  TxnHarness h;
  h.part->txn_commit(txn("g", 1, 10));
  h.marker(1, true);
  h.part->txn_commit(txn("g", 2, 20, "u"));
  h.marker(2, false);
  h.part->txn_commit(txn("g", 3, 30, "v"));  // still open at the end of the log
  h.part->txn_commit(txn("g", 4, 40, "w"));
  CommitRequest plain{"g", -1, "", std::nullopt, {{{"w", 0}, {41, -1, "", -1, -1}}}};
  h.part->commit(plain);
  h.marker(4, true);
  h.reload();
  EXPECT_EQ(h.committed("g", {"t", 0}), 10);
  EXPECT_EQ(h.committed("g", {"u", 0}), -1);
  E error = E::none;
  EXPECT_EQ(h.committed("g", {"v", 0}, true, &error), -1);
  EXPECT_EQ(error, E::unstable_offset_commit);
  EXPECT_EQ(h.committed("g", {"w", 0}), 41) << "the plain commit came after the transactional one";
  h.part->complete_txn(3, true);
  EXPECT_EQ(h.committed("g", {"v", 0}, true), 30);
}

TEST(TxnOffsets, ZombiesOfAnOlderGenerationAndFailedWritesAreRefused) {
  TxnHarness h;
  auto r = txn("fresh", 7, 1);
  r.generation = 3;
  r.member_id = "m";
  EXPECT_EQ(h.part->txn_commit(r), std::vector<E>{E::illegal_generation});
  h.fail = E::not_leader_or_follower;
  EXPECT_EQ(h.part->txn_commit(txn("g", 7, 1)), std::vector<E>{E::not_coordinator});
  EXPECT_EQ(h.part->pending_txn_offsets(), 0u);
}

}  // namespace
}  // namespace brokerd::group
