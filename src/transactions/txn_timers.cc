// What a coordinator does on its own, per partition of __transaction_state it leads: every
// transaction.abort.timed.out.transaction.cleanup.interval.ms it aborts the transactions
// older than their timeout (fencing their producers), and every
// transaction.remove.expired.transaction.cleanup.interval.ms it writes tombstones for the ids
// idle past transactional.id.expiration.ms.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "transactions/txn_slot.h"

namespace brokerd::transactions {

boost::asio::awaitable<void> TransactionCoordinator::timers(int32_t p, uint64_t term) {
  Slot& slot = *slots_[p];
  int64_t last_expiry_check = wall_clock_ms();
  while (!stopping_ && slot.term == term) {
    slot.timer->expires_after(std::chrono::milliseconds(settings_.abort_check_interval_ms));
    auto [ec] = co_await slot.timer->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (ec || stopping_ || slot.term != term) break;
    const int64_t now = wall_clock_ms();

    std::vector<std::pair<std::string, ProducerId>> late;
    for (const auto& [id, md] : slot.ids)
      if (timed_out(md, now)) late.emplace_back(id, md.producer_id);
    for (const auto& [id, pid] : late) {
      auto it = slot.ids.find(id);
      if (it == slot.ids.end()) continue;
      Decision d = abort_timed_out(it->second, pid, now);
      if (d.error != ErrorCode::none) continue;
      module_logger("transactions")
          ->info("{}: aborting the transaction of {} (producer {} epoch {}): older than its timeout of {} ms",
                 slot.tp.dir_name(), id, pid, it->second.producer_epoch, it->second.timeout_ms);
      Started st = start_write(slot, id, std::move(d));
      if (!st.write) continue;
      counts_.timed_out.fetch_add(1);
      boost::asio::co_spawn(slot.executor, finish_write(p, id, std::move(*st.write), st.offset, st.term),
                            boost::asio::detached);
    }

    if (now - last_expiry_check < settings_.expire_check_interval_ms) continue;
    last_expiry_check = now;
    std::vector<std::string> idle;
    for (const auto& [id, md] : slot.ids)
      if (should_expire(md, now, settings_.rules)) idle.push_back(id);
    for (const auto& id : idle) {
      TxnMetadata& md = slot.ids.at(id);
      auto dead = transactions::expire(md, now, settings_.rules);
      if (!dead) continue;
      begin_transition(md, *dead);
      auto [error, offset] = append(slot, txn_tombstone(id));
      if (error != ErrorCode::none) {
        abandon_transition(md, *dead, false);
        continue;
      }
      boost::asio::co_spawn(slot.executor, expire(p, term, id, offset, *dead), boost::asio::detached);
    }
  }
}

boost::asio::awaitable<void> TransactionCoordinator::expire(int32_t p, uint64_t term, std::string id, int64_t offset,
                                                            TxnValue dead) {
  Slot& slot = *slots_[p];
  const ErrorCode e = co_await partitions_.await_replicated(slot.tp, offset, settings_.write_timeout_ms);
  if (stopping_ || slot.term != term) co_return;
  auto it = slot.ids.find(id);
  if (it == slot.ids.end() || it->second.pending_state != TxnState::dead) co_return;
  slot.changed();
  if (e != ErrorCode::none) {
    abandon_transition(it->second, dead, false);
    co_return;
  }
  slot.ids.erase(it);
  module_logger("transactions")->info("{}: transactional id {} expired", slot.tp.dir_name(), id);
}

}  // namespace brokerd::transactions
