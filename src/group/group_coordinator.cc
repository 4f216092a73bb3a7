#include "brokerd/group/group_coordinator.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>

#include "brokerd/partitions/fan_out.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/net/run_on.h"
#include "brokerd/storage/batch_builder.h"
#include "group/group_partition.h"
#include "brokerd/common/java_hash.h"

namespace brokerd::group {
namespace {

partitions::TopicPartition offsets_tp(int32_t p) { return {std::string(kOffsetsTopic), p}; }

}  // namespace

int32_t offsets_partition_for(std::string_view group_id, int32_t partitions) {
  return (java_string_hash(group_id) & 0x7fffffff) % partitions;
}

Settings settings_from(const config::BrokerConfig& cfg) {
  Settings s;
  s.offsets_partitions = static_cast<int32_t>(cfg.integer("offsets.topic.num.partitions"));
  s.initial_rebalance_delay_ms = cfg.integer("group.initial.rebalance.delay.ms");
  s.min_session_timeout_ms = static_cast<int32_t>(cfg.integer("group.min.session.timeout.ms"));
  s.max_session_timeout_ms = static_cast<int32_t>(cfg.integer("group.max.session.timeout.ms"));
  s.max_size = static_cast<int32_t>(cfg.integer("group.max.size"));
  s.offsets_retention_ms = cfg.integer("offsets.retention.minutes") * 60 * 1000;
  s.retention_check_interval_ms = cfg.integer("offsets.retention.check.interval.ms");
  s.offset_metadata_max_bytes = static_cast<int32_t>(cfg.integer("offset.metadata.max.bytes"));
  s.commit_timeout_ms = cfg.integer("offsets.commit.timeout.ms");
  s.offsets_segment_bytes = static_cast<int32_t>(cfg.integer("offsets.topic.segment.bytes"));
  return s;
}

int32_t ensure_offsets_topic(metadata::MetadataStore& metadata, const Settings& settings, int32_t replication_factor) {
  std::string name(kOffsetsTopic);
  if (const auto* t = metadata.image()->topic(name)) return t->partition_count();
  // Kafka's settings for this topic: compacted, offsets.topic.segment.bytes segments.
  std::map<std::string, std::string> configs{{"cleanup.policy", "compact"},
                                             {"segment.bytes", std::to_string(settings.offsets_segment_bytes)}};
  auto change = metadata.create_topic(name, settings.offsets_partitions, replication_factor, configs, false);
  // Another node leads the quorum (and creates the topic as it starts), or created it just now.
  if (change.error == ErrorCode::not_controller || change.error == ErrorCode::topic_already_exists)
    return settings.offsets_partitions;
  if (change.error == ErrorCode::invalid_replication_factor) {
    // Too few brokers yet: the first FindCoordinator after enough have registered creates it.
    // Clients ask again and again meanwhile: said once a minute.
    static std::atomic<int64_t> last_said{INT64_MIN / 2};
    const int64_t now = wall_clock_ms();
    if (now - last_said.load() >= 60'000) {
      last_said = now;
      module_logger("group")->warn("{} not created yet (offsets.topic.replication.factor {}): {}", name,
                                   replication_factor, change.message);
    }
    return settings.offsets_partitions;
  }
  if (change.error != ErrorCode::none)
    throw std::runtime_error("cannot create " + name + ": " + std::string(protocol::error_name(change.error)) + " " +
                             change.message);
  return settings.offsets_partitions;
}

struct GroupCoordinator::Slot {
  boost::asio::any_io_executor executor;
  std::unique_ptr<GroupPartition> part;
  std::unique_ptr<boost::asio::steady_timer> expiry;
  // Home shard only: this node leads the offsets partition; the term counts leadership
  // changes, so that a load or expiry loop of an earlier term stops.
  bool led = false;
  uint64_t term = 0;
  int64_t last_appended = -1;  // the last offset this coordinator wrote to the partition
};

GroupCoordinator::GroupCoordinator(Settings settings, partitions::PartitionManager& partitions,
                                   net::BlockingPool& blocking)
    : settings_(settings), partitions_(partitions), blocking_(blocking) {
  for (int32_t p = 0; p < settings_.offsets_partitions; ++p) {
    auto slot = std::make_unique<Slot>();
    auto tp = offsets_tp(p);
    slot->executor = partitions_.executor_of(tp);
    auto appender = [this, tp, s = slot.get()](std::vector<OffsetsRecord> records) -> ErrorCode {
      return append_batch(tp, *s, std::move(records), storage::BatchOptions{});
    };
    slot->part = std::make_unique<GroupPartition>(slot->executor, p, settings_, std::move(appender), wall_clock_ms);
    // TxnOffsetCommit: the producer's transactional batch (no sequence: the coordinator's own
    // write), which the transaction's marker on this partition later ends.
    slot->part->set_txn_appender([this, tp, s = slot.get()](std::vector<OffsetsRecord> records, int64_t producer_id,
                                                           int16_t epoch) -> ErrorCode {
      storage::BatchOptions opts;
      opts.producer_id = producer_id;
      opts.producer_epoch = epoch;
      opts.transactional = true;
      return append_batch(tp, *s, std::move(records), opts);
    });
    slot->part->resign();  // until this node leads the partition
    slot->expiry = std::make_unique<boost::asio::steady_timer>(slot->executor);
    slots_.push_back(std::move(slot));
  }
}

GroupCoordinator::~GroupCoordinator() = default;

ErrorCode GroupCoordinator::append_batch(const partitions::TopicPartition& tp, Slot& slot,
                                         std::vector<OffsetsRecord> records, const storage::BatchOptions& opts) {
  partitions::Partition* part = partitions_.leading(tp);
  if (!part) return ErrorCode::not_leader_or_follower;
  const int64_t now = wall_clock_ms();
  storage::BatchBuilder builder(opts);
  for (auto& r : records) {
    std::optional<std::span<const std::byte>> value;
    if (r.value) value = std::span<const std::byte>(*r.value);
    builder.add(now, std::span<const std::byte>(r.key), value);
  }
  Bytes batch = builder.build();
  auto res = part->append(batch, now, storage::AppendOrigin::coordinator);
  if (res.error == ErrorCode::none) slot.last_appended = res.last_offset;
  return res.error;
}

int32_t GroupCoordinator::partition_for(std::string_view group_id) const {
  return offsets_partition_for(group_id, settings_.offsets_partitions);
}

void GroupCoordinator::start() {
  partitions_.watch_leadership([this](const partitions::TopicPartition& tp, bool leads) {
    if (tp.topic != kOffsetsTopic || tp.partition < 0 || tp.partition >= settings_.offsets_partitions) return;
    on_leadership(tp.partition, leads);
  });
}

void GroupCoordinator::on_leadership(int32_t p, bool leads) {
  Slot& slot = *slots_[p];
  if (slot.led == leads || stopping_) return;
  slot.led = leads;
  ++slot.term;
  if (leads) {
    slot.part->begin_loading();
    boost::asio::co_spawn(slot.executor, load(p, slot.term), boost::asio::detached);
  } else {
    slot.expiry->cancel();
    slot.part->resign();
    module_logger("group")->info("{}: no longer the coordinator of its groups", offsets_tp(p).dir_name());
  }
}

boost::asio::awaitable<void> GroupCoordinator::load(int32_t p, uint64_t term) {
  auto tp = offsets_tp(p);
  Slot& slot = *slots_[p];
  GroupPartition& part = *slot.part;
  auto current = [&] { return !stopping_ && slot.term == term; };
  auto started = std::chrono::steady_clock::now();
  int64_t records = 0;
  int64_t skipped = 0;  // records the coordinator cannot have written
  constexpr int64_t kSkipsLogged = 10;
  try {
    partitions::Partition* partition = partitions_.local(tp);
    int64_t offset = partition ? partition->log().log_start_offset() : 0;
    while (partition && current()) {
      int64_t end = partition->log().log_end_offset();  // a new leader's high watermark may lag its log
      if (offset >= end) break;
      auto rr = partition->log().read(offset, 1 << 20, true, end);
      if (rr.error != ErrorCode::none) break;
      // Reading may wait for the disk: do it on the blocking pool (the slices keep the files open).
      auto read = [records = std::move(rr.records)] { return records.to_bytes(); };
      Bytes data = co_await blocking_.run(std::move(read));
      if (!current()) co_return;
      size_t pos = 0;
      int64_t before = offset;
      while (pos + storage::batch_layout::header_size <= data.size()) {
        storage::RecordBatchView batch(std::span<const std::byte>(data).subspan(pos));
        if (batch.size() > data.size() - pos) break;
        if (batch.is_control()) {
          // A transaction's marker: its offsets become committed, or go.
          if (auto marker = control_marker(batch)) part.replay_marker(batch.producer_id(), *marker);
        } else if (batch.is_transactional() && batch.producer_id() >= 0) {
          // Offsets sent to a transaction (TxnOffsetCommit).
          storage::RecordReader reader(batch);
          storage::Record r;
          std::string why;
          while (reader.next(r)) {
            if (r.offset < offset) continue;
            if (r.key && r.headers.empty() && part.replay_txn(*r.key, r.value, batch.producer_id(), &why)) {
              ++records;
              continue;
            }
            if (skipped < kSkipsLogged)
              module_logger("group")->warn("{}: skipping the transactional record at offset {}: {}", tp.dir_name(),
                                           r.offset, r.key ? why : std::string("no key"));
            ++skipped;
          }
        } else if (!coordinator_batch(batch)) {
          // Not written by a coordinator (a producer's batch): its records are not group state.
          const int64_t n = batch.next_offset() - std::max(offset, batch.base_offset());
          if (n > 0 && skipped < kSkipsLogged) {
            module_logger("group")->warn("{}: skipping offsets {}-{}: a batch the coordinator cannot have written "
                                         "(producer id {}, attributes {:#x})",
                                         tp.dir_name(), batch.base_offset(), batch.last_offset(), batch.producer_id(),
                                         batch.attributes());
          }
          skipped += std::max<int64_t>(n, 0);
        } else {
          storage::RecordReader reader(batch);
          storage::Record r;
          std::string why;
          while (reader.next(r)) {
            if (r.offset < offset) continue;
            if (r.key && r.headers.empty() && part.replay(*r.key, r.value, &why)) {
              ++records;
              continue;
            }
            if (skipped < kSkipsLogged) {
              if (!r.key) why = "no key";
              else if (!r.headers.empty()) why = "headers";
              module_logger("group")->warn("{}: skipping the record at offset {}: {}", tp.dir_name(), r.offset, why);
            }
            ++skipped;
          }
        }
        offset = batch.next_offset();
        pos += batch.size();
      }
      if (offset == before) break;
      // Let the shard's other work run between chunks.
      co_await boost::asio::post(co_await boost::asio::this_coro::executor, boost::asio::use_awaitable);
      partition = partitions_.local(tp);
    }
  } catch (const std::exception& e) {
    module_logger("group")->error("{}: loading stopped: {}", tp.dir_name(), e.what());
  }
  if (!current()) co_return;
  part.finish_loading();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  if (records) module_logger("group")->info("{}: replayed {} records in {} ms", tp.dir_name(), records, ms);
  if (skipped) {
    module_logger("group")->warn("{}: skipped {} records the coordinator cannot have written", tp.dir_name(),
                                 skipped);
  }
  co_await expiry_loop(p, term);
}

boost::asio::awaitable<void> GroupCoordinator::expiry_loop(int32_t p, uint64_t term) {
  Slot& slot = *slots_[p];
  auto& timer = *slot.expiry;
  while (!stopping_ && slot.term == term) {
    timer.expires_after(std::chrono::milliseconds(settings_.retention_check_interval_ms));
    auto [ec] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (ec || stopping_ || slot.term != term) break;
    slots_[p]->part->expire_offsets();
  }
}

void GroupCoordinator::stop() {
  stopping_ = true;
  std::vector<std::future<void>> done;
  for (auto& slot : slots_) {
    auto promise = std::make_shared<std::promise<void>>();
    done.push_back(promise->get_future());
    boost::asio::post(slot->executor, [s = slot.get(), promise] {
      s->expiry->cancel();
      s->part->shutdown();
      promise->set_value();
    });
  }
  for (auto& f : done) f.wait_for(std::chrono::seconds(5));
}

// ---- calls, each run on the group's home shard ----

boost::asio::awaitable<JoinResult> GroupCoordinator::join(JoinRequest req) {
  auto& slot = *slots_[partition_for(req.group_id)];
  auto fn = [part = slot.part.get(), r = std::move(req)]() mutable { return part->join(std::move(r)); };
  co_return co_await net::run_on(slot.executor, std::move(fn));
}

boost::asio::awaitable<SyncResult> GroupCoordinator::sync(SyncRequest req) {
  const int32_t p = partition_for(req.group_id);
  auto& slot = *slots_[p];
  auto fn = [part = slot.part.get(), r = std::move(req)]() mutable { return part->sync(std::move(r)); };
  SyncResult result = co_await net::run_on(slot.executor, std::move(fn));
  if (result.error == ErrorCode::none) {
    // The assignment the group was given is in the log on every in-sync replica.
    if (ErrorCode e = co_await replicated(p); e != ErrorCode::none) result = SyncResult{e, {}, {}, {}};
  }
  co_return result;
}

boost::asio::awaitable<ErrorCode> GroupCoordinator::replicated(int32_t p) {
  auto& slot = *slots_[p];
  const int64_t last = co_await net::run_on(slot.executor, [s = &slot] { return s->last_appended; });
  if (last < 0) co_return ErrorCode::none;
  co_return append_error_to_group_error(
      co_await partitions_.await_replicated(offsets_tp(p), last, settings_.commit_timeout_ms));
}

boost::asio::awaitable<ErrorCode> GroupCoordinator::heartbeat(std::string group_id, std::string member_id,
                                                              std::optional<std::string> instance_id,
                                                              int32_t generation) {
  auto& slot = *slots_[partition_for(group_id)];
  auto fn = [part = slot.part.get(), g = std::move(group_id), m = std::move(member_id), i = std::move(instance_id),
             generation] { return part->heartbeat(g, m, i, generation); };
  co_return co_await net::run_on(slot.executor, std::move(fn));
}

boost::asio::awaitable<LeaveResult> GroupCoordinator::leave(std::string group_id, std::vector<LeaveMember> members) {
  auto& slot = *slots_[partition_for(group_id)];
  auto fn = [part = slot.part.get(), g = std::move(group_id), m = std::move(members)] { return part->leave(g, m); };
  co_return co_await net::run_on(slot.executor, std::move(fn));
}

boost::asio::awaitable<std::vector<ErrorCode>> GroupCoordinator::txn_commit(TxnCommitRequest req) {
  const int32_t p = partition_for(req.group_id);
  auto& slot = *slots_[p];
  auto fn = [part = slot.part.get(), r = std::move(req)] { return part->txn_commit(r); };
  std::vector<ErrorCode> errors = co_await net::run_on(slot.executor, std::move(fn));
  co_return co_await once_replicated(p, std::move(errors));
}

void GroupCoordinator::complete_txn(int32_t partition, int64_t producer_id, bool commit) {
  if (partition < 0 || partition >= static_cast<int32_t>(slots_.size())) return;
  auto& slot = *slots_[partition];
  boost::asio::post(slot.executor, [part = slot.part.get(), producer_id, commit] { part->complete_txn(producer_id, commit); });
}

boost::asio::awaitable<std::vector<ErrorCode>> GroupCoordinator::commit(CommitRequest req) {
  const int32_t p = partition_for(req.group_id);
  auto& slot = *slots_[p];
  auto fn = [part = slot.part.get(), r = std::move(req)] { return part->commit(r); };
  std::vector<ErrorCode> errors = co_await net::run_on(slot.executor, std::move(fn));
  co_return co_await once_replicated(p, std::move(errors));
}

boost::asio::awaitable<std::vector<ErrorCode>> GroupCoordinator::once_replicated(int32_t p,
                                                                                std::vector<ErrorCode> errors) {
  // A commit is answered once every in-sync replica of the offsets partition has it, so a
  // new coordinator after a failover never starts a group below an acknowledged commit.
  if (std::any_of(errors.begin(), errors.end(), [](ErrorCode e) { return e == ErrorCode::none; })) {
    if (ErrorCode e = co_await replicated(p); e != ErrorCode::none)
      for (auto& x : errors)
        if (x == ErrorCode::none) x = e;
  }
  co_return errors;
}

boost::asio::awaitable<FetchOffsetsResult> GroupCoordinator::fetch(std::string group_id,
                                                                   std::optional<std::vector<OffsetKey>> keys,
                                                                   bool require_stable) {
  auto& slot = *slots_[partition_for(group_id)];
  auto fn = [part = slot.part.get(), g = std::move(group_id), k = std::move(keys), require_stable] {
    return part->fetch(g, k, require_stable);
  };
  co_return co_await net::run_on(slot.executor, std::move(fn));
}

boost::asio::awaitable<std::pair<ErrorCode, std::vector<GroupListing>>> GroupCoordinator::list() {
  struct Part {
    bool loaded = false;
    std::vector<GroupListing> groups;
  };
  std::vector<partitions::FanOutTask<Part>> tasks;
  for (auto& slot : slots_) {
    tasks.push_back({slot->executor, [part = slot->part.get()] {
                       return Part{part->loaded() || !part->coordinating(), part->list()};
                     }});
  }
  auto parts = co_await partitions::fan_out(std::move(tasks));
  std::pair<ErrorCode, std::vector<GroupListing>> out{ErrorCode::none, {}};
  for (auto& p : parts) {
    if (!p.loaded) out.first = ErrorCode::coordinator_load_in_progress;
    for (auto& g : p.groups) out.second.push_back(std::move(g));
  }
  co_return out;
}

boost::asio::awaitable<GroupDescription> GroupCoordinator::describe(std::string group_id) {
  auto& slot = *slots_[partition_for(group_id)];
  auto fn = [part = slot.part.get(), g = std::move(group_id)] { return part->describe(g); };
  co_return co_await net::run_on(slot.executor, std::move(fn));
}

boost::asio::awaitable<ErrorCode> GroupCoordinator::delete_group(std::string group_id) {
  auto& slot = *slots_[partition_for(group_id)];
  auto fn = [part = slot.part.get(), g = std::move(group_id)] { return part->delete_group(g); };
  co_return co_await net::run_on(slot.executor, std::move(fn));
}

boost::asio::awaitable<std::pair<ErrorCode, std::vector<ErrorCode>>> GroupCoordinator::delete_offsets(
    std::string group_id, std::vector<OffsetKey> keys) {
  auto& slot = *slots_[partition_for(group_id)];
  auto fn = [part = slot.part.get(), g = std::move(group_id), k = std::move(keys)] {
    return part->delete_offsets(g, k);
  };
  co_return co_await net::run_on(slot.executor, std::move(fn));
}

}  // namespace brokerd::group
