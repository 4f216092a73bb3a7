#pragma once
// The partitions this node hosts, spread over the reactor shards: each partition has one
// home shard where all its work runs. Also runs each shard's background duties: retention,
// grouped fsync off the reactors, and deletion of expired segment files.
//
// Where each part lives: partition_manager.cc (opening at load, routing to home shards,
// offline partitions, stats, stopping), reconcile.cc (the hosted replicas made to match each
// metadata image), leadership.cc (followed leaders, AlterPartition, waits for replication),
// flush_and_clean.cc (each shard's tick: flushes and the cleaner), hw_checkpoints.cc,
// partition_moves.cc (moves between log dirs), and shard.h (what a shard holds).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "brokerd/partitions/fetch_purgatory.h"
#include "brokerd/partitions/log_dir_move.h"
#include "brokerd/metadata/metadata_image.h"
#include "brokerd/partitions/partition.h"
#include "brokerd/partitions/replication_throttle.h"
#include "brokerd/metadata/topic_config.h"
#include "brokerd/partitions/topic_partition.h"
#include "brokerd/storage/offset_checkpoint.h"

namespace brokerd::net {
class ReactorPool;
class BlockingPool;
}  // namespace brokerd::net
namespace brokerd::config {
class BrokerConfig;
}  // namespace brokerd::config

namespace brokerd::partitions {

// One hosted partition as a metrics scrape sees it.
struct PartitionStats {
  TopicPartition tp;
  uint64_t size_bytes = 0;
  size_t segments = 0;
  int64_t log_start_offset = 0;
  int64_t log_end_offset = 0;
  int64_t high_watermark = 0;
  std::filesystem::path log_dir;  // the log dir holding the partition's directory
  bool leader = false;            // this node leads it
  int32_t replicas = 0;
  int32_t isr = 0;                // the controller's ISR, as the leader knows it
  int32_t min_isr = 1;
  // While the partition moves to another log dir: that dir, the bytes copied there, and how
  // many offsets the copy trails the log end by.
  std::filesystem::path future_log_dir;
  uint64_t future_size_bytes = 0;
  int64_t future_offset_lag = 0;
  // What read_committed consumers may read up to (below the high watermark while a
  // transaction is open).
  int64_t last_stable_offset = 0;
};

class PartitionManager {
 public:
  struct Options {
    int32_t node_id = 0;  // this node: it hosts the partitions whose replicas name it
    std::vector<std::filesystem::path> log_dirs;
    // Broker-level defaults of topic properties, from the static config; dynamic broker
    // configs in the metadata image override them (and the throttle rates) at runtime.
    metadata::ConfigMap topic_defaults;
    int64_t retention_check_interval_ms = 300000;
    // The log cleaner: compacts partitions whose cleanup.policy has "compact". Each pass reads
    // and writes on the blocking pool; only the final segment swap runs on the home shard.
    struct Cleaner {
      bool enable = true;                          // log.cleaner.enable
      int32_t threads = 1;                         // log.cleaner.threads: passes at a time
      int64_t backoff_ms = 15000;                  // log.cleaner.backoff.ms
      int64_t dedupe_buffer_bytes = 128LL << 20;   // log.cleaner.dedupe.buffer.size (all threads)
      int64_t io_max_bytes_per_second = 0;         // log.cleaner.io.max.bytes.per.second, 0 = off
    } cleaner;
    int64_t replica_lag_time_max_ms = 30000;  // replica.lag.time.max.ms
    uint32_t replication_bugs = 0;  // replication::Bug, test builds only (inject.bug)
    // Whether this node's metadata is known to be current (MetadataStore::image_age_ms within
    // the session timeout), and the session timeout: together the leaders' lease
    // (replication::Replica::check_lease). Unset: always current.
    std::function<bool()> metadata_current;
    int64_t session_timeout_ms = 3000;
    // replica.high.watermark.checkpoint.interval.ms: how often each log dir's
    // replication-offset-checkpoint records the high watermarks (also written at shutdown).
    int64_t hw_checkpoint_interval_ms = 5000;
    // leader/follower.replication.throttled.rate (replication_throttle.h).
    int64_t leader_throttle_rate = INT64_MAX;
    int64_t follower_throttle_rate = INT64_MAX;
    // Log dirs formatted by this start (new_log_dirs() in node_identity.h): nothing in them
    // to recover, and the start says so rather than report an unclean shutdown.
    std::vector<std::filesystem::path> new_log_dirs;
    // Test builds only (inject.bug): the cleaner and retention ignore the high watermark, read_committed
    // readers ignore open transactions, a COMMIT marker is left out, so the fault campaign can
    // prove it sees what each loses.
    struct StorageBugs {
      bool clean_past_high_watermark = false;
      bool retention_past_high_watermark = false;
      bool lso_ignores_open_txn = false;
      bool txn_skip_marker = false;  // COMMIT markers on partition 0 of client topics answered, not written
    } storage_bugs;
  };
  static Options::Cleaner cleaner_settings_from(const config::BrokerConfig& cfg);

  PartitionManager(net::ReactorPool& reactors, net::BlockingPool& blocking, Options options);
  ~PartitionManager();

  // Before the reactors run: opens the logs of every partition in `image` with a replica
  // on this node (creating the missing ones) and deletes directories of partitions the image
  // no longer places here.
  void load(std::shared_ptr<const metadata::MetadataImage> image);
  // Starts each shard's retention and flush loops, and the high-watermark checkpoints. The
  // reactors must be running.
  void start();
  // The first step of a stop, from any thread: wakes every parked fetch (they answer at
  // once, and later ones do not park) and ends the shards' loops within a tick.
  void stop();
  // After the reactors have stopped: flushes and closes every log and marks each log dir
  // as cleanly shut down.
  void shutdown();

  size_t shards() const { return shards_.size(); }
  size_t shard_of(const TopicPartition& tp) const;
  boost::asio::any_io_executor executor_of(const TopicPartition& tp) const;
  // The partition on its home shard, or nullptr if this node does not host it.
  // Call only on tp's home shard.
  Partition* local(const TopicPartition& tp);
  // Why a client's request for tp finds no partition leading here: KAFKA_STORAGE_ERROR while
  // this node hosts tp but cannot open its log, NOT_LEADER_OR_FOLLOWER otherwise.
  // Call only on tp's home shard.
  protocol::ErrorCode not_served(const TopicPartition& tp) const {
    return offline(tp) ? protocol::ErrorCode::kafka_storage_error : protocol::ErrorCode::not_leader_or_follower;
  }
  // Whether this node hosts tp but cannot open its log (home shard only).
  bool offline(const TopicPartition& tp) const;
  // The same, but only while this node leads the partition (what clients may use).
  Partition* leading(const TopicPartition& tp) {
    Partition* p = local(tp);
    return p && p->is_leader() ? p : nullptr;
  }

  // Brings the hosted partitions in line with `image` (create, delete, reconfigure, take or
  // give up leadership) on every shard; returns once all shards have. Each shard visits only
  // the topics that changed since the image it applied last, in slices of a few milliseconds
  // between which it serves its connections (a change of thousands of partitions never stalls
  // a reactor). Older images than one already applied are ignored, so concurrent callers
  // cannot undo each other.
  boost::asio::awaitable<void> reconcile(std::shared_ptr<const metadata::MetadataImage> image);

  // Calls fn(tp, leads) on tp's home shard whenever this node starts or stops leading one of
  // its partitions; at once, each shard calls it for every partition it hosts. Call once
  // the reactors run.
  using LeadershipListener = std::function<void(const TopicPartition&, bool leads)>;
  void watch_leadership(LeadershipListener fn);

  // Where the leaders of partitions ask the controller for ISR changes: called on the
  // partition's home shard; the sender answers through Partition::replica() on that shard.
  using AlterPartitionSender =
      std::function<void(const TopicPartition&, const protocol::Uuid& topic_id, replication::AlterPartitionRequest)>;
  void on_alter_partition(AlterPartitionSender fn);
  // After an input to a partition's replication core on its home shard: completes what it
  // completed and sends the AlterPartition it asks for.
  void after_replica_input(const TopicPartition& tp, Partition& p) {
    p.drain_replica();
    send_alter_partition(tp, p);
  }
  // A fresh id for Partition::await_replication (unique across every waiter of the node).
  uint64_t next_ack_id() { return next_ack_id_.fetch_add(1); }
  // acks=all for the node's own writes (group metadata, offset commits): waits until this
  // node, still leading tp, has replicated [.., last_offset] to the ISR. NOT_LEADER_OR_FOLLOWER
  // when it no longer leads, NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below the
  // minimum, REQUEST_TIMED_OUT after timeout_ms. Callable from a coroutine on any executor.
  boost::asio::awaitable<protocol::ErrorCode> await_replicated(const TopicPartition& tp, int64_t last_offset,
                                                               int64_t timeout_ms);
  // DeleteRecords' wait: until every in-sync replica of tp (led here) has moved its log start
  // to `offset` or beyond. The low watermark then, or NOT_LEADER_OR_FOLLOWER, or
  // REQUEST_TIMED_OUT after timeout_ms. Callable from a coroutine on any executor.
  boost::asio::awaitable<std::pair<protocol::ErrorCode, int64_t>> await_low_watermark(const TopicPartition& tp,
                                                                                     int64_t offset,
                                                                                     int64_t timeout_ms);
  // flush.messages: syncs tp's log now (on the blocking pool) when at least that many records
  // are unflushed, so that the produce that reached the count is answered once they are
  // durable. KAFKA_STORAGE_ERROR when the sync failed. Callable from any executor.
  boost::asio::awaitable<protocol::ErrorCode> flush_if_due(const TopicPartition& tp);
  // The leaders this node follows partitions of, and the partitions it follows from one (for
  // the replica fetchers; any thread). The list is shared until the next change, so that a
  // fetcher asking every round copies nothing while nothing moves.
  std::vector<int32_t> followed_leaders() const;
  std::shared_ptr<const std::vector<TopicPartition>> followed_from(int32_t leader) const;

  // The replication throttle's rates, for the replicas the topics list (replication_throttle.h).
  ReplicationQuota& leader_quota() { return leader_quota_; }
  ReplicationQuota& follower_quota() { return follower_quota_; }

  // The fetches parked on this node's partitions.
  FetchPurgatory& purgatory() { return purgatory_; }

  // AlterReplicaLogDirs: moves tp's directory to `target`, one of log_dirs(), while tp keeps
  // serving (partitions/log_dir_move.h); call on tp's home shard. NONE once the move is under
  // way, or when tp lives there already (a move elsewhere is then called off);
  // REPLICA_NOT_AVAILABLE when this node does not host tp; KAFKA_STORAGE_ERROR when its log
  // cannot be opened.
  protocol::ErrorCode move_to_log_dir(const TopicPartition& tp, const std::filesystem::path& target);

  // The defaults of topic properties in force: static, with the dynamic broker configs over them.
  metadata::ConfigMap topic_defaults() const { return *current_defaults(); }
  const std::vector<std::filesystem::path>& log_dirs() const { return options_.log_dirs; }
  const Options::StorageBugs& storage_bugs() const { return options_.storage_bugs; }

  // The stats of every hosted partition, gathered from each shard by a fan-out; callable
  // from a coroutine on any running executor (the metrics endpoint's thread).
  boost::asio::awaitable<std::vector<PartitionStats>> partition_stats();

 private:
  struct Shard;
  // One topic's part of a reconciliation.
  struct TopicStep {
    metadata::TopicPtr before, after;
    bool defaults_changed = false;
  };
  // The steps that bring the shard from the image it applied last to `image`; the shard takes
  // the current topic defaults (when they changed, every hosted topic is a step).
  std::vector<TopicStep> plan_reconcile(Shard& shard, const metadata::MetadataImage& image);
  // All steps at once (at load, before the reactors run).
  void reconcile_now(Shard& shard, const std::shared_ptr<const metadata::MetadataImage>& image);
  // On the shard: hands `image` to its reconciliation loop, starting the loop if idle. The loop
  // applies the newest image handed over, slice by slice, until none is newer.
  void hand_over(size_t shard, const std::shared_ptr<const metadata::MetadataImage>& image);
  boost::asio::awaitable<void> reconcile_loop(size_t shard);
  // On the shard: returns once it has applied an image at `offset` or later.
  boost::asio::awaitable<void> reconciled(size_t shard, int64_t offset);
  // `defaults_changed`: the topic defaults moved, so every partition takes its settings anew.
  void reconcile_topic(Shard& shard, const metadata::TopicPtr& before, const metadata::TopicPtr& after, bool defaults_changed = false);
  // Closes a hosted partition and deletes its directory (in the background).
  void drop_partition(Shard& shard, const TopicPartition& tp);
  std::unique_ptr<Partition> open_partition(const TopicPartition& tp, const metadata::TopicMetadata& topic,
                                            const std::filesystem::path& dir, bool clean, bool metadata_checked,
                                            int64_t high_watermark);
  // The replication-offset-checkpoint of every log dir: read at load (into each shard's
  // hw_at_start), written every interval and at shutdown.
  void read_hw_checkpoints();
  boost::asio::awaitable<void> hw_checkpoint_loop();
  // Every hosted partition's high watermark, by log dir (each shard's own when `shard` is set).
  using HwByDir = std::map<std::filesystem::path, std::vector<storage::OffsetCheckpointEntry>>;
  HwByDir high_watermarks(const Shard* shard) const;
  // Writes the checkpoints whose text changed since `written` (updated); false if one failed.
  static bool write_hw_checkpoints(const HwByDir& hws, std::map<std::filesystem::path, std::string>& written);
  // Opens tp (in its offline entry's dir, or a new one) and hosts it; on failure records it
  // offline (logged once per reason) and returns nullptr.
  Partition* try_open(Shard& shard, const TopicPartition& tp, const metadata::TopicMetadata& topic);
  // The evictor of the open files budget (storage/file_budget.h): releases the files of the
  // least recently used 1/32 of the shard's partitions holding any (a batch, so that the scan
  // is paid once per many opens). True if it released any.
  bool release_idle_files(Shard& shard);
  // Installs on the calling thread an evictor over every shard (before the reactors run and
  // after they stop, when this thread owns them all).
  void release_idle_files_of_every_shard();
  // Opens again the offline partitions whose retry is due.
  void retry_offline(Shard& shard, int64_t now_ms);
  std::filesystem::path choose_log_dir();
  // Every 100 ms: the shard's due work, and a visit of a slice of its partitions (replication
  // ticks, leases, flushes, retention). A shard of up to kVisitsPerTick partitions is visited
  // whole at each tick; a larger one in slices, so that each partition is visited at least
  // every kMaxTicksPerPass ticks (500 ms; less when a quarter of replica.lag.time.max.ms or of
  // the session timeout is shorter): an idle node of 60,000 partitions per shard does not
  // spend half a core walking them.
  static constexpr size_t kVisitsPerTick = 5000;
  static constexpr size_t kMaxTicksPerPass = 5;
  boost::asio::awaitable<void> background_loop(size_t shard);
  // The partitions in buckets [from, to) of the shard's map whose flush.ms or flush.messages is due.
  void flush_due(Shard& shard, size_t index, int64_t now_ms, size_t from, size_t to);
  // Starts a cleaner pass for each compacted partition whose backoff has passed (while fewer
  // than log.cleaner.threads passes run node-wide).
  void clean_due(Shard& shard, size_t index, int64_t now_ms);

  // A move between log dirs (partition_moves.cc), known to tp's home shard only.
  struct LogDirMove {
    std::filesystem::path target;
    uint64_t generation = 0;  // a newer request for tp replaces the move
    uint64_t copied_bytes = 0;
    int64_t copied_end = 0;   // the log end when the last round began
  };
  boost::asio::awaitable<void> run_move(size_t shard, TopicPartition tp, uint64_t generation);
  // A cleaner pass of tp is under way (on its home shard).
  bool cleaning(size_t shard, const TopicPartition& tp) const;
  // The last round and the swap, on the home shard with nothing else running there.
  void finish_move(Partition& p, const std::filesystem::path& future, const std::filesystem::path& final_dir,
                   CopiedFiles& copied);

  void set_followed(const TopicPartition& tp, int32_t leader);
  void send_alter_partition(const TopicPartition& tp, Partition& p);

  net::ReactorPool& reactors_;
  net::BlockingPool& blocking_;
  Options options_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<size_t> next_dir_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<int> cleaner_passes_{0};
  FetchPurgatory purgatory_;
  ReplicationQuota leader_quota_;
  ReplicationQuota follower_quota_;
  // The dynamic broker configs last taken from an image, and the topic defaults they give.
  mutable std::mutex dynamic_mu_;
  std::shared_ptr<const config::DynamicConfigs> dynamic_configs_;
  int64_t dynamic_offset_ = -1;
  std::shared_ptr<const metadata::ConfigMap> defaults_;
  // Takes `image`'s dynamic broker configs (unless an image as new was taken already).
  void take_dynamic_configs(const metadata::MetadataImage& image);
  std::shared_ptr<const metadata::ConfigMap> current_defaults() const;
  std::atomic<uint64_t> next_ack_id_{1};
  std::vector<std::unordered_map<TopicPartition, LogDirMove>> moves_;  // per shard: the moves wanted
  std::vector<std::unordered_set<TopicPartition>> moving_;              // per shard: the moves running
  std::atomic<uint64_t> next_move_{1};
  AlterPartitionSender alter_sender_;
  mutable std::mutex followed_mu_;
  std::unordered_map<TopicPartition, int32_t> followed_;  // partition -> its leader
  std::unordered_map<int32_t, std::unordered_set<TopicPartition>> followed_by_;  // leader -> partitions
  mutable std::unordered_map<int32_t, std::shared_ptr<const std::vector<TopicPartition>>> followed_lists_;
};

}  // namespace brokerd::partitions
