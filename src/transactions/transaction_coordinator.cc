// The coordinator's lifecycle (leadership of __transaction_state partitions, loading) and its
// read-only calls; the writing calls go through run() (txn_writes.cc).
#include "brokerd/transactions/transaction_coordinator.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <future>
#include <regex>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/run_on.h"
#include "brokerd/partitions/fan_out.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/storage/record_batch.h"
#include "brokerd/transactions/marker_sender.h"
#include "brokerd/transactions/states.h"
#include "transactions/txn_slot.h"

namespace brokerd::transactions {
namespace {

TxnListing listing_of(const TxnMetadata& md) {
  TxnListing l;
  l.transactional_id = md.transactional_id;
  l.state = md.state;
  l.producer_id = md.producer_id;
  l.producer_epoch = md.producer_epoch;
  l.timeout_ms = md.timeout_ms;
  l.txn_start_ms = md.txn_start_ms;
  l.partitions.assign(md.partitions.begin(), md.partitions.end());
  return l;
}

bool passes(const TxnMetadata& md, const ListFilter& f, const std::optional<std::regex>& pattern, int64_t now_ms) {
  if (!f.states.empty() && std::find(f.states.begin(), f.states.end(), md.state) == f.states.end()) return false;
  if (!f.producer_ids.empty() &&
      std::find(f.producer_ids.begin(), f.producer_ids.end(), md.producer_id) == f.producer_ids.end())
    return false;
  // KIP-994: only ongoing transactions have a duration; one running at least this long.
  if (f.min_duration_ms >= 0 && (md.state != TxnState::ongoing || now_ms - md.txn_start_ms < f.min_duration_ms))
    return false;
  if (pattern && !std::regex_match(md.transactional_id, *pattern)) return false;
  return true;
}

}  // namespace

TransactionCoordinator::TransactionCoordinator(Settings settings, partitions::PartitionManager& partitions,
                                               net::BlockingPool& blocking, MarkerSender& markers)
    : settings_(settings), partitions_(partitions), blocking_(blocking), markers_(markers) {
  for (int32_t p = 0; p < settings_.rules.log_partitions; ++p) {
    auto slot = std::make_unique<Slot>();
    slot->tp = {std::string(kTransactionStateTopic), p};
    slot->executor = partitions_.executor_of(slot->tp);
    slot->timer = std::make_unique<boost::asio::steady_timer>(slot->executor);
    slot->bell = std::make_unique<boost::asio::steady_timer>(slot->executor);
    slots_.push_back(std::move(slot));
  }
}

TransactionCoordinator::~TransactionCoordinator() = default;

int32_t TransactionCoordinator::partition_for(std::string_view transactional_id) const {
  return transactions::partition_for(transactional_id, settings_.rules.log_partitions);
}

void TransactionCoordinator::start() {
  partitions_.watch_leadership([this](const partitions::TopicPartition& tp, bool leads) {
    if (tp.topic != kTransactionStateTopic || tp.partition < 0 || tp.partition >= settings_.rules.log_partitions)
      return;
    on_leadership(tp.partition, leads);
  });
}

void TransactionCoordinator::stop() {
  stopping_ = true;
  std::vector<std::future<void>> done;
  for (auto& slot : slots_) {
    auto promise = std::make_shared<std::promise<void>>();
    done.push_back(promise->get_future());
    boost::asio::post(slot->executor, [s = slot.get(), promise] {
      s->timer->cancel();
      s->bell->cancel();
      s->led = false;
      ++s->term;
      s->ids.clear();
      s->ongoing = 0;
      promise->set_value();
    });
  }
  for (auto& f : done) f.wait_for(std::chrono::seconds(5));
}

void TransactionCoordinator::on_leadership(int32_t p, bool leads) {
  Slot& slot = *slots_[p];
  if (slot.led == leads || stopping_) return;
  slot.led = leads;
  slot.loaded = false;
  ++slot.term;
  slot.ids.clear();
  counts_.ongoing.fetch_sub(slot.ongoing);
  slot.ongoing = 0;
  slot.timer->cancel();
  slot.changed();
  if (leads) {
    boost::asio::co_spawn(slot.executor, load(p, slot.term), boost::asio::detached);
  } else {
    module_logger("transactions")->info("{}: no longer the coordinator of its transactional ids", slot.tp.dir_name());
  }
}

boost::asio::awaitable<void> TransactionCoordinator::load(int32_t p, uint64_t term) {
  Slot& slot = *slots_[p];
  auto current = [&] { return !stopping_ && slot.term == term; };
  const auto started = std::chrono::steady_clock::now();
  std::vector<TxnLogRecord> records;
  size_t skipped = 0;
  try {
    partitions::Partition* partition = partitions_.local(slot.tp);
    if (partition) slot.coordinator_epoch = partition->leader_epoch();
    int64_t offset = partition ? partition->log().log_start_offset() : 0;
    while (partition && current()) {
      const int64_t end = partition->log().log_end_offset();
      if (offset >= end) break;
      auto rr = partition->log().read(offset, 1 << 20, true, end);
      if (rr.error != ErrorCode::none) break;
      auto read = [records = std::move(rr.records)] { return records.to_bytes(); };
      Bytes data = co_await blocking_.run(std::move(read));
      if (!current()) co_return;
      size_t pos = 0;
      const int64_t before = offset;
      while (pos + storage::batch_layout::header_size <= data.size()) {
        storage::RecordBatchView batch(std::span<const std::byte>(data).subspan(pos));
        if (batch.size() > data.size() - pos) break;
        if (!batch.is_control() && batch.producer_id() < 0) {
          storage::RecordReader reader(batch);
          storage::Record r;
          while (reader.next(r)) {
            if (r.offset < offset) continue;
            if (!r.key) {
              ++skipped;
              continue;
            }
            TxnLogRecord rec;
            rec.key.assign(r.key->begin(), r.key->end());
            if (r.value) rec.value = Bytes(r.value->begin(), r.value->end());
            records.push_back(std::move(rec));
          }
        }
        offset = batch.next_offset();
        pos += batch.size();
      }
      if (offset == before) break;
      co_await boost::asio::post(co_await boost::asio::this_coro::executor, boost::asio::use_awaitable);
      partition = partitions_.local(slot.tp);
    }
  } catch (const std::exception& e) {
    module_logger("transactions")->error("{}: loading stopped: {}", slot.tp.dir_name(), e.what());
    co_return;  // the partition stays unloaded: its ids answer COORDINATOR_LOAD_IN_PROGRESS
  }
  if (!current()) co_return;
  try {
    slot.ids = replay_txn_log(records);
  } catch (const std::exception& e) {
    module_logger("transactions")->error("{}: cannot replay the log: {}", slot.tp.dir_name(), e.what());
    co_return;
  }
  slot.loaded = true;
  for (const auto& [id, md] : slot.ids) slot.ongoing += md.state == TxnState::ongoing ? 1 : 0;
  counts_.ongoing.fetch_add(slot.ongoing);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  // Said at info only when there was something to load: a new topic has 50 empty partitions.
  module_logger("transactions")
      ->log(slot.ids.empty() && !skipped ? spdlog::level::debug : spdlog::level::info,
            "{}: coordinator of {} transactional ids (coordinator epoch {}), loaded in {} ms{}", slot.tp.dir_name(),
            slot.ids.size(), slot.coordinator_epoch, ms,
            skipped ? fmt::format(", {} records without a key skipped", skipped) : std::string());
  if (settings_.forget_prepared_commit) {
    for (auto& [id, md] : slot.ids)
      if (md.state == TxnState::prepare_commit) md.state = TxnState::prepare_abort;
  }
  // What the previous coordinator prepared is finished here.
  for (auto& plan : resume_after_load(slot.ids, wall_clock_ms())) {
    auto it = slot.ids.find(plan.transactional_id);
    if (it == slot.ids.end()) continue;
    begin_transition(it->second, plan.complete);
    send_markers(p, term, std::move(plan));
  }
  co_await timers(p, term);
}

boost::asio::awaitable<std::vector<std::pair<TopicPartition, ErrorCode>>> TransactionCoordinator::verify_partitions(
    AddPartitionsRequest req) {
  Slot& slot = *slots_[partition_for(req.transactional_id)];
  auto fn = [s = &slot, r = std::move(req)] {
    if (!s->led || !s->loaded) {
      std::vector<std::pair<TopicPartition, ErrorCode>> out;
      for (const auto& tp : r.partitions)
        out.emplace_back(tp, s->led ? ErrorCode::coordinator_load_in_progress : ErrorCode::not_coordinator);
      return out;
    }
    auto it = s->ids.find(r.transactional_id);
    return transactions::verify_partitions(it == s->ids.end() ? nullptr : &it->second, r);
  };
  co_return co_await net::run_on(slot.executor, std::move(fn));
}

boost::asio::awaitable<std::vector<TxnListing>> TransactionCoordinator::describe(std::vector<std::string> ids) {
  std::vector<TxnListing> out(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    Slot& slot = *slots_[partition_for(ids[i])];
    auto fn = [s = &slot, id = ids[i]] {
      TxnListing l;
      l.transactional_id = id;
      if (!s->led) {
        l.error = ErrorCode::not_coordinator;
      } else if (!s->loaded) {
        l.error = ErrorCode::coordinator_load_in_progress;
      } else if (auto it = s->ids.find(id); it == s->ids.end()) {
        l.error = ErrorCode::transactional_id_not_found;
      } else {
        l = listing_of(it->second);
      }
      return l;
    };
    out[i] = co_await net::run_on(slot.executor, std::move(fn));
  }
  co_return out;
}

boost::asio::awaitable<std::pair<ErrorCode, std::vector<TxnListing>>> TransactionCoordinator::list(ListFilter filter) {
  struct Part {
    bool loading = false;
    std::vector<TxnListing> ids;
  };
  std::optional<std::regex> pattern;
  if (filter.id_pattern && !filter.id_pattern->empty()) {
    try {
      pattern.emplace(*filter.id_pattern, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      co_return std::pair{ErrorCode::invalid_regular_expression, std::vector<TxnListing>{}};
    }
  }
  const int64_t now = wall_clock_ms();
  std::vector<partitions::FanOutTask<Part>> tasks;
  for (auto& slot : slots_) {
    tasks.push_back({slot->executor, [s = slot.get(), &filter, &pattern, now] {
                       Part part;
                       part.loading = s->led && !s->loaded;
                       if (!s->led || !s->loaded) return part;
                       for (const auto& [id, md] : s->ids)
                         if (passes(md, filter, pattern, now)) part.ids.push_back(listing_of(md));
                       return part;
                     }});
  }
  auto parts = co_await partitions::fan_out(std::move(tasks));
  std::pair<ErrorCode, std::vector<TxnListing>> out{ErrorCode::none, {}};
  for (auto& p : parts) {
    if (p.loading) out.first = ErrorCode::coordinator_load_in_progress;
    for (auto& l : p.ids) out.second.push_back(std::move(l));
  }
  co_return out;
}

}  // namespace brokerd::transactions
