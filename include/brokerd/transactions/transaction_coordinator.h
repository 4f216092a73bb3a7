#pragma once
// The transaction coordinator: the rules of coordinator_rules.h run against the partitions of
// __transaction_state this node leads. A transactional id belongs to partition
// partition_for(id) of the topic; all of that partition's ids live on its home shard, where
// each call below hops (run_on), decides without locks, writes the transition to the log,
// waits until the in-sync replicas have it, and only then applies it and answers.
//
// Lifecycle as the group coordinator's: ensure_transaction_topic() when a client first asks for
// a transaction coordinator; construct; start() once the reactors run: from then on, whenever
// this node becomes the leader of a __transaction_state partition it replays it (answering
// COORDINATOR_LOAD_IN_PROGRESS meanwhile), takes the partition's leader epoch as its
// coordinator epoch, and completes the transactions its predecessor prepared; when it stops
// leading one it drops its ids. stop() before the reactors stop.
//
// Files: transaction_coordinator.cc (lifecycle, loading, the calls), txn_writes.cc (a
// decision written, replicated and applied; markers and their completion), txn_timers.cc
// (timed-out transactions and expired ids), txn_topic.cc (the topic and the settings),
// marker_sender.h (WriteTxnMarkers to partition leaders).
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/transactions/coordinator_rules.h"

namespace brokerd::config { class BrokerConfig; }
namespace brokerd::metadata { class MetadataStore; }
namespace brokerd::partitions { class PartitionManager; }
namespace brokerd::net { class BlockingPool; }

namespace brokerd::transactions {

class MarkerSender;

struct Settings {
  CoordinatorConfig rules;
  int16_t replication_factor = 3;          // transaction.state.log.replication.factor
  int32_t min_isr = 2;                      // transaction.state.log.min.isr
  int32_t segment_bytes = 104'857'600;      // transaction.state.log.segment.bytes
  int64_t abort_check_interval_ms = 10'000;  // transaction.abort.timed.out.transaction.cleanup.interval.ms
  int64_t expire_check_interval_ms = 3'600'000;  // transaction.remove.expired.transaction.cleanup.interval.ms
  int64_t write_timeout_ms = 5'000;         // how long a transition may take to replicate
  bool verify_partitions = true;            // transaction.partition.verification.enable
  // The cluster's finalized transaction.version (features.h); rules.txn_version when unset. From
  // 1 on, __transaction_state values carry the client's version and the ids of KIP-890 part 2.
  std::function<int16_t()> finalized_txn_version;
  // Test builds only (inject.bug forget-prepared-commit): a loaded PrepareCommit is taken for a
  // PrepareAbort, so the fault campaign can prove it sees the commit lost.
  bool forget_prepared_commit = false;
};

Settings settings_from(const config::BrokerConfig& cfg);

// Creates __transaction_state (compacted, min.insync.replicas from the settings) if the
// metadata does not have it yet; a cluster with fewer live brokers than the factor gets
// COORDINATOR_NOT_AVAILABLE until it has them. Returns the partition count in use.
int32_t ensure_transaction_topic(metadata::MetadataStore& metadata, const Settings& settings);

// What InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn answer.
struct TxnAnswer {
  ErrorCode error = ErrorCode::none;
  ProducerIdAndEpoch producer;
};

// One transactional id as DescribeTransactions and ListTransactions show it.
struct TxnListing {
  std::string transactional_id;
  ErrorCode error = ErrorCode::none;  // NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...
  TxnState state = TxnState::empty;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  int32_t timeout_ms = 0;
  int64_t txn_start_ms = -1;
  std::vector<TopicPartition> partitions;
};

struct ListFilter {
  std::vector<TxnState> states;          // empty: any
  std::vector<ProducerId> producer_ids;  // empty: any
  int64_t min_duration_ms = -1;          // -1: any
  std::optional<std::string> id_pattern; // a regular expression over the id (KIP-1152)
};

class TransactionCoordinator {
 public:
  TransactionCoordinator(Settings settings, partitions::PartitionManager& partitions, net::BlockingPool& blocking,
                         MarkerSender& markers);
  ~TransactionCoordinator();

  void start();
  void stop();

  int32_t partition_for(std::string_view transactional_id) const;
  const Settings& settings() const { return settings_; }

  // `fresh_id` is a producer id allocated beforehand (off the reactors), used if the rules
  // want a new one.
  boost::asio::awaitable<TxnAnswer> init_producer_id(InitProducerIdRequest req, ProducerId fresh_id);
  // `from_broker`: a partition leader adds for a transaction.version 2 producer (KIP-890 part 2).
  // It is answered at once, CONCURRENT_TRANSACTIONS included: the leader's verification must
  // not span the previous transaction's markers, which end it (the producer retries).
  boost::asio::awaitable<std::vector<std::pair<TopicPartition, ErrorCode>>> add_partitions(AddPartitionsRequest req,
                                                                                          bool from_broker = false);
  // KIP-890 part 1: whether each partition is in the producer's ongoing transaction.
  boost::asio::awaitable<std::vector<std::pair<TopicPartition, ErrorCode>>> verify_partitions(AddPartitionsRequest req);
  boost::asio::awaitable<TxnAnswer> add_offsets(std::string transactional_id, ProducerId producer_id,
                                                ProducerEpoch epoch, int32_t offsets_partition, int16_t txn_version);
  // `fresh_id`: a new producer id for a transaction.version 2 producer whose epoch is exhausted
  // (the next one goes on with it), -1 otherwise.
  boost::asio::awaitable<TxnAnswer> end_txn(EndTxnRequest req, ProducerId fresh_id = kNoProducerId);
  boost::asio::awaitable<std::vector<TxnListing>> describe(std::vector<std::string> ids);
  // Every id of every loaded partition that passes the filter; the error is
  // COORDINATOR_LOAD_IN_PROGRESS while some partition is still loading.
  boost::asio::awaitable<std::pair<ErrorCode, std::vector<TxnListing>>> list(ListFilter filter);

  // Counters for the metrics (any thread).
  struct Counts {
    std::atomic<uint64_t> committed{0}, aborted{0}, timed_out{0};
    std::atomic<int64_t> ongoing{0};  // ids in Ongoing on the partitions led here
  };
  const Counts& counts() const { return counts_; }

 private:
  struct Slot;
  struct Step;
  void on_leadership(int32_t partition, bool leads);
  boost::asio::awaitable<void> load(int32_t partition, uint64_t term);
  boost::asio::awaitable<void> timers(int32_t partition, uint64_t term);
  // Decides on the id's home shard (`decide` sees the cached metadata, null for an unknown
  // id), then writes and applies what was decided (txn_writes.cc).
  using Decide = std::function<Decision(const TxnMetadata*)>;
  // A client's request that meets a transition in flight waits for it this long before it
  // answers CONCURRENT_TRANSACTIONS (txn_writes.cc says why).
  static constexpr int64_t kConcurrentWaitMs = 1000;
  // `wait_ms`: how long a request that meets a transition in flight waits for it.
  boost::asio::awaitable<TxnAnswer> run(const std::string& id, Decide decide, int64_t wait_ms = kConcurrentWaitMs);
  // On the partition's home shard: begins the decided transition and appends it. Without a
  // write (an error, an answer known already) `write` is empty and `answer` says it all.
  struct Started {
    TxnAnswer answer;
    std::optional<Decision> write;
    int64_t offset = -1;
    uint64_t term = 0;
  };
  Started start_write(Slot& slot, const std::string& id, Decision d);
  // Waits until the in-sync replicas have the write, then applies it on the home shard and
  // does what the decision says follows (an answer, the markers).
  boost::asio::awaitable<TxnAnswer> finish_write(int32_t partition, std::string id, Decision d, int64_t offset,
                                                 uint64_t term);
  // Sends a prepared transaction's markers, then writes its completion (txn_writes.cc). On
  // the partition's home shard.
  void send_markers(int32_t partition, uint64_t term, MarkerPlan plan);
  boost::asio::awaitable<void> complete(int32_t partition, uint64_t term, MarkerPlan plan);
  // The __transaction_state value version the finalized transaction.version asks for.
  int16_t value_version() const;
  // Appends one record to the partition's log on its home shard: the error, or the offset.
  std::pair<ErrorCode, int64_t> append(Slot& slot, const TxnLogRecord& record);
  // txn_timers.cc: an id idle past transactional.id.expiration.ms leaves with a tombstone.
  boost::asio::awaitable<void> expire(int32_t partition, uint64_t term, std::string id, int64_t offset, TxnValue dead);

  Settings settings_;
  partitions::PartitionManager& partitions_;
  net::BlockingPool& blocking_;
  MarkerSender& markers_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::atomic<bool> stopping_{false};
  Counts counts_;
};

}  // namespace brokerd::transactions
