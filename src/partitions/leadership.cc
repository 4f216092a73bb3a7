// Leadership and the ISR as this broker sees them: which leaders it follows (for the
// fetchers), AlterPartition requests, and producers' waits for replication.
#include "brokerd/partitions/partition_manager.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <map>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/run_on.h"
#include "partitions/shard.h"

namespace brokerd::partitions {
namespace fs = std::filesystem;

void PartitionManager::set_followed(const TopicPartition& tp, int32_t leader) {
  std::lock_guard lock(followed_mu_);
  auto it = followed_.find(tp);
  const int32_t before = it == followed_.end() ? -1 : it->second;
  if (before == leader) return;
  if (before >= 0) {
    auto& set = followed_by_[before];
    set.erase(tp);
    if (set.empty()) followed_by_.erase(before);
    followed_lists_.erase(before);
  }
  if (leader < 0) {
    if (it != followed_.end()) followed_.erase(it);
    return;
  }
  followed_[tp] = leader;
  followed_by_[leader].insert(tp);
  followed_lists_.erase(leader);
}

std::vector<int32_t> PartitionManager::followed_leaders() const {
  std::lock_guard lock(followed_mu_);
  std::vector<int32_t> out;
  for (const auto& [leader, _] : followed_by_) out.push_back(leader);
  return out;
}

std::shared_ptr<const std::vector<TopicPartition>> PartitionManager::followed_from(int32_t leader) const {
  std::lock_guard lock(followed_mu_);
  auto& list = followed_lists_[leader];
  if (!list) {
    auto it = followed_by_.find(leader);
    list = it == followed_by_.end() ? std::make_shared<const std::vector<TopicPartition>>()
                                    : std::make_shared<const std::vector<TopicPartition>>(it->second.begin(), it->second.end());
  }
  return list;
}

void PartitionManager::on_alter_partition(AlterPartitionSender fn) { alter_sender_ = std::move(fn); }

void PartitionManager::send_alter_partition(const TopicPartition& tp, Partition& p) {
  auto request = p.take_alter_partition();
  if (!request || !alter_sender_) return;
  alter_sender_(tp, p.topic_id(), std::move(*request));
}

void PartitionManager::watch_leadership(LeadershipListener fn) {
  for (size_t i = 0; i < shards_.size(); ++i) {
    boost::asio::post(reactors_.executor(i), [this, i, fn] {
      Shard& shard = *shards_[i];
      shard.listeners.push_back(fn);
      for (const auto& [tp, p] : shard.partitions) fn(tp, p->is_leader());
    });
  }
}

boost::asio::awaitable<protocol::ErrorCode> PartitionManager::await_replicated(const TopicPartition& tp,
                                                                             int64_t last_offset, int64_t timeout_ms) {
  auto waiter = purgatory_.waiter(co_await boost::asio::this_coro::executor);
  auto slot = std::make_shared<AckSlot>();
  slot->waiter = waiter;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const int64_t deadline_ms = wall_clock_ms() + timeout_ms;
  const auto id = next_ack_id();
  // A named lambda: GCC 12 mishandles an owning-capture temporary inside co_await.
  auto start = [this, tp, last_offset, deadline_ms, slot, id] {
    Partition* p = leading(tp);
    if (!p) {  // appended before leadership moved on
      Partition* was = local(tp);
      return was ? was->replica().unconfirmed_answer(last_offset) : replication::kAppendedUnconfirmed;
    }
    p->await_replication(id, last_offset, deadline_ms, slot, wall_clock_ms());
    after_replica_input(tp, *p);
    return protocol::ErrorCode::none;
  };
  const auto refused = co_await net::run_on(executor_of(tp), std::move(start));
  if (refused != protocol::ErrorCode::none) co_return refused;
  while (true) {
    waiter->reset();
    if (slot->done || std::chrono::steady_clock::now() >= deadline || purgatory_.stopped()) break;
    co_await waiter->wait_until(deadline);
  }
  co_return slot->done ? static_cast<protocol::ErrorCode>(slot->error.load()) : protocol::ErrorCode::request_timed_out;
}

boost::asio::awaitable<std::pair<protocol::ErrorCode, int64_t>> PartitionManager::await_low_watermark(
    const TopicPartition& tp, int64_t offset, int64_t timeout_ms) {
  using Answer = std::pair<protocol::ErrorCode, int64_t>;
  auto waiter = purgatory_.waiter(co_await boost::asio::this_coro::executor);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0));
  while (true) {
    waiter->reset();
    auto check = [this, tp, offset, waiter]() -> Answer {
      Partition* p = leading(tp);
      if (!p) return {not_served(tp), -1};
      const int64_t low = p->replica().low_watermark();
      if (low >= offset) return {protocol::ErrorCode::none, low};
      p->watch_low_watermark(waiter);
      return {protocol::ErrorCode::request_timed_out, -1};
    };
    const Answer a = co_await net::run_on(executor_of(tp), std::move(check));
    if (a.first != protocol::ErrorCode::request_timed_out) co_return a;
    if (std::chrono::steady_clock::now() >= deadline || purgatory_.stopped()) co_return a;
    co_await waiter->wait_until(deadline);
  }
}

}  // namespace brokerd::partitions
