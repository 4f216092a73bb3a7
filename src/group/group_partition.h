#pragma once
// Every group whose id hashes to one partition of __consumer_offsets, with its members and
// committed offsets. A GroupPartition lives on that partition's home shard and is only
// touched there (timers included), so it takes no locks. Persistence goes through an
// Appender (the partition's log in the broker; a vector in tests).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "brokerd/group/offsets_records.h"
#include "brokerd/group/types.h"

namespace brokerd::group {

// A record to write: key and value (nullopt = tombstone).
struct OffsetsRecord {
  Bytes key;
  std::optional<Bytes> value;
};

// An offset sent to a transaction that has not ended yet.
struct PendingTxnOffset {
  OffsetEntry entry;
  bool superseded = false;  // a plain commit of the partition came after it
};

class GroupPartition {
 public:
  // Appends the records as one batch and returns when they are in the log.
  using Appender = std::function<ErrorCode(std::vector<OffsetsRecord>)>;
  using WallClock = std::function<int64_t()>;
  // Appends the records as one transactional batch of the producer (TxnOffsetCommit).
  using TxnAppender = std::function<ErrorCode(std::vector<OffsetsRecord>, int64_t producer_id, int16_t epoch)>;

  GroupPartition(boost::asio::any_io_executor ex, int32_t partition, const Settings& settings, Appender append,
                 WallClock clock);
  ~GroupPartition();
  GroupPartition(const GroupPartition&) = delete;
  GroupPartition& operator=(const GroupPartition&) = delete;

  int32_t partition() const { return partition_; }

  // Loading: begin_loading(), feed every record of the partition in offset order, then
  // finish_loading(). Until then every operation answers COORDINATOR_LOAD_IN_PROGRESS.
  // A partition starts loading as constructed (tests); in a cluster it starts resigned and
  // loads when this node becomes the leader of its offsets partition.
  void begin_loading();
  // A record that is not one of the coordinator's (a key or value that does not decode, as
  // exactly its fields, under a known version) changes nothing: false, and why in `why`.
  bool replay(std::span<const std::byte> key, std::optional<std::span<const std::byte>> value,
              std::string* why = nullptr);
  // A record of a transactional batch of `producer_id`, and the marker that ends that
  // producer's transaction on this partition (group_txn_offsets.cc).
  bool replay_txn(std::span<const std::byte> key, std::optional<std::span<const std::byte>> value,
                  int64_t producer_id, std::string* why = nullptr);
  void replay_marker(int64_t producer_id, bool commit);
  void finish_loading();
  bool loaded() const { return loaded_; }
  bool coordinating() const { return coordinating_; }
  // This node no longer leads the offsets partition: shutdown(), forget the groups, and
  // answer NOT_COORDINATOR until begin_loading().
  void resign();

  boost::asio::awaitable<JoinResult> join(JoinRequest req);
  boost::asio::awaitable<SyncResult> sync(SyncRequest req);
  ErrorCode heartbeat(const std::string& group_id, const std::string& member_id,
                      const std::optional<std::string>& instance_id, int32_t generation);
  LeaveResult leave(const std::string& group_id, const std::vector<LeaveMember>& members);

  // One error per offset of the request, in order.
  std::vector<ErrorCode> commit(const CommitRequest& req);
  // keys == nullopt: every committed offset of the group. With require_stable, a partition
  // whose offset an open transaction holds answers UNSTABLE_OFFSET_COMMIT (KIP-447).
  FetchOffsetsResult fetch(const std::string& group_id, const std::optional<std::vector<OffsetKey>>& keys,
                           bool require_stable = false) const;
  // TxnOffsetCommit (group_txn_offsets.cc): written as the producer's transactional batch,
  // pending until complete_txn(). One error per offset, in order.
  void set_txn_appender(TxnAppender append) { txn_append_ = std::move(append); }
  std::vector<ErrorCode> txn_commit(const TxnCommitRequest& req);
  // The producer's transaction ended on this partition (its marker is written).
  void complete_txn(int64_t producer_id, bool commit);
  size_t pending_txn_offsets() const;
  std::vector<GroupListing> list() const;
  GroupDescription describe(const std::string& group_id) const;
  ErrorCode delete_group(const std::string& group_id);
  // Group error, then one error per key.
  std::pair<ErrorCode, std::vector<ErrorCode>> delete_offsets(const std::string& group_id,
                                                              const std::vector<OffsetKey>& keys);
  // Writes tombstones for expired offsets (and drops empty groups left without any); returns
  // how many offsets expired.
  size_t expire_offsets();

  // Cancels every timer and answers every waiting join/sync with NOT_COORDINATOR.
  void shutdown();

  size_t group_count() const { return groups_.size(); }

 private:
  struct Member;
  struct Group;
  using GroupPtr = std::shared_ptr<Group>;

  Group* find(const std::string& id) const;
  GroupPtr get_or_create(const std::string& id);
  void maybe_drop(const GroupPtr& g);

  boost::asio::awaitable<JoinResult> join_new(GroupPtr g, JoinRequest req);
  boost::asio::awaitable<JoinResult> join_existing(GroupPtr g, JoinRequest req);
  boost::asio::awaitable<JoinResult> replace_static(GroupPtr g, JoinRequest req, std::string old_id);
  boost::asio::awaitable<JoinResult> add_and_wait(GroupPtr g, JoinRequest req, std::string id);
  boost::asio::awaitable<JoinResult> rejoin_and_wait(GroupPtr g, Member& m, const JoinRequest& req);
  JoinResult current_join_result(const Group& g, const Member& m, bool with_members) const;
  void update_member(Member& m, const JoinRequest& req);

  bool supports_protocols(const Group& g, const JoinRequest& req) const;
  std::optional<std::string> select_protocol(const Group& g) const;
  void prepare_rebalance(const GroupPtr& g);
  void try_complete_join(const GroupPtr& g);
  void complete_join(const GroupPtr& g);
  void arm_join_timer(const GroupPtr& g);
  void on_join_timer(const std::weak_ptr<Group>& wg);
  void arm_sync_timer(const GroupPtr& g);
  void on_sync_timer(const std::weak_ptr<Group>& wg, int32_t generation);
  void remove_member(const GroupPtr& g, const std::string& member_id, ErrorCode answer);
  void erase_member(Group& g, const std::string& member_id, ErrorCode answer);
  void touch(const GroupPtr& g, Member& m);
  void on_session_timer(const std::weak_ptr<Group>& wg, const std::string& member_id);
  void add_pending(const GroupPtr& g, const std::string& member_id, int32_t session_timeout_ms);
  void set_state(Group& g, GroupState s);

  ErrorCode persist_group(const Group& g);
  ErrorCode append(std::vector<OffsetsRecord> records);
  ErrorCode commit_error(const Group* g, const CommitRequest& req) const;
  // The records of a commit's offsets, and the offsets they carry; an offset refused
  // (metadata too large) gets its error in `out` instead.
  struct CommitRecords {
    std::vector<OffsetsRecord> records;
    std::vector<std::pair<OffsetKey, OffsetEntry>> accepted;
  };
  CommitRecords commit_records(const CommitRequest& req, std::vector<ErrorCode>& out) const;
  std::vector<std::string> subscribed_topics(const Group& g) const;

  boost::asio::any_io_executor ex_;
  int32_t partition_;
  Settings settings_;
  Appender append_;
  TxnAppender txn_append_;
  WallClock clock_;
  bool loaded_ = false;
  bool coordinating_ = true;
  // What an operation answers before loading finished.
  ErrorCode not_ready() const {
    return coordinating_ ? ErrorCode::coordinator_load_in_progress : ErrorCode::not_coordinator;
  }
  std::map<std::string, GroupPtr, std::less<>> groups_;
  // Replay state, until finish_loading().
  std::map<std::string, std::optional<StoredGroup>> loading_groups_;
  std::map<std::string, std::map<OffsetKey, OffsetEntry>> loading_offsets_;
  // Transactional offsets read but not yet ended by a marker: producer -> group -> offsets.
  std::map<int64_t, std::map<std::string, std::map<OffsetKey, PendingTxnOffset>>> loading_txn_;
  // The groups holding offsets of each open transaction.
  std::map<int64_t, std::set<std::string>> txn_groups_;
  // A plain commit of `key` supersedes what open transactions hold for it.
  void supersede_pending(Group& g, const OffsetKey& key);
};

// Kafka's mapping of an append failure on __consumer_offsets to the group error clients see.
ErrorCode append_error_to_group_error(ErrorCode e);

}  // namespace brokerd::group
