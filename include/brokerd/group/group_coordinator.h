#pragma once
// The group coordinator (classic protocol). A group belongs to one partition of
// __consumer_offsets, (java_string_hash(group_id) & 0x7fffffff) % partitions, and all of
// its state lives on that partition's home shard: each call below hops there (run_on), does
// its work without locks, and resumes the caller on its own executor. Joins and syncs that
// wait for a rebalance are coroutines parked on that shard's timers.
//
// A node coordinates the groups of the offsets partitions it leads, and answers
// NOT_COORDINATOR for the others. Lifecycle: ensure_offsets_topic() before the partitions are
// loaded; construct; start() once the reactors run: from then on, whenever this node becomes
// the leader of an offsets partition it replays it on its shard (answering
// COORDINATOR_LOAD_IN_PROGRESS meanwhile), and when it stops leading one it drops its groups;
// stop() before the reactors stop.
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "brokerd/group/types.h"

namespace brokerd::config { class BrokerConfig; }
namespace brokerd::metadata { class MetadataStore; }
namespace brokerd::partitions { class PartitionManager; struct TopicPartition; }
namespace brokerd::storage { struct BatchOptions; }
namespace brokerd::net { class ReactorPool; class BlockingPool; }

namespace brokerd::group {

class GroupPartition;
struct OffsetsRecord;

// The __consumer_offsets partition of a group. (Kafka takes Utils.abs of the hash where
// this clears its sign bit: a group whose hash is negative sits on another partition than
// Kafka would put it; kept, since moving it would strand the group's committed offsets.)
int32_t offsets_partition_for(std::string_view group_id, int32_t partitions);

Settings settings_from(const config::BrokerConfig& cfg);

// Creates __consumer_offsets (compacted) if the metadata does not have it yet. Returns its
// partition count, which wins over offsets.topic.num.partitions once the topic exists.
int32_t ensure_offsets_topic(metadata::MetadataStore& metadata, const Settings& settings, int32_t replication_factor);

class GroupCoordinator {
 public:
  // `blocking` reads the offsets partitions at load, off the reactors.
  GroupCoordinator(Settings settings, partitions::PartitionManager& partitions, net::BlockingPool& blocking);
  ~GroupCoordinator();

  void start();
  void stop();

  int32_t partition_for(std::string_view group_id) const;
  const Settings& settings() const { return settings_; }

  boost::asio::awaitable<JoinResult> join(JoinRequest req);
  boost::asio::awaitable<SyncResult> sync(SyncRequest req);
  boost::asio::awaitable<ErrorCode> heartbeat(std::string group_id, std::string member_id,
                                              std::optional<std::string> instance_id, int32_t generation);
  boost::asio::awaitable<LeaveResult> leave(std::string group_id, std::vector<LeaveMember> members);
  boost::asio::awaitable<std::vector<ErrorCode>> commit(CommitRequest req);
  // With require_stable, partitions an open transaction holds an offset of answer
  // UNSTABLE_OFFSET_COMMIT.
  boost::asio::awaitable<FetchOffsetsResult> fetch(std::string group_id, std::optional<std::vector<OffsetKey>> keys,
                                                   bool require_stable = false);
  // TxnOffsetCommit: offsets pending in the producer's transaction, answered once the offsets
  // partition's in-sync replicas have them.
  boost::asio::awaitable<std::vector<ErrorCode>> txn_commit(TxnCommitRequest req);
  // The transaction of `producer_id` ended on offsets partition `partition` (its marker is
  // written there): its offsets become committed, or are dropped. From any thread.
  void complete_txn(int32_t partition, int64_t producer_id, bool commit);
  // Every group of every loaded partition; the error is COORDINATOR_LOAD_IN_PROGRESS while
  // some partition is still loading.
  boost::asio::awaitable<std::pair<ErrorCode, std::vector<GroupListing>>> list();
  boost::asio::awaitable<GroupDescription> describe(std::string group_id);
  boost::asio::awaitable<ErrorCode> delete_group(std::string group_id);
  boost::asio::awaitable<std::pair<ErrorCode, std::vector<ErrorCode>>> delete_offsets(std::string group_id,
                                                                                    std::vector<OffsetKey> keys);

 private:
  struct Slot;
  // On the partition's home shard: this node starts or stops leading offsets partition p.
  void on_leadership(int32_t partition, bool leads);
  boost::asio::awaitable<void> load(int32_t partition, uint64_t term);
  boost::asio::awaitable<void> expiry_loop(int32_t partition, uint64_t term);
  // Waits until what this coordinator last wrote to offsets partition p is on every in-sync
  // replica (acks=all for its own writes); the error in group terms otherwise.
  boost::asio::awaitable<ErrorCode> replicated(int32_t partition);
  // Appends the records to offsets partition tp as one batch with these producer fields, on
  // its home shard.
  ErrorCode append_batch(const partitions::TopicPartition& tp, Slot& slot, std::vector<OffsetsRecord> records,
                         const storage::BatchOptions& opts);
  // The errors of a commit, the accepted offsets' turned into the replication's error if the
  // in-sync replicas do not get them.
  boost::asio::awaitable<std::vector<ErrorCode>> once_replicated(int32_t partition, std::vector<ErrorCode> errors);

  Settings settings_;
  partitions::PartitionManager& partitions_;
  net::BlockingPool& blocking_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::atomic<bool> stopping_{false};
};

}  // namespace brokerd::group
