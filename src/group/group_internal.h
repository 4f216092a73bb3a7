#pragma once
// The private structures of GroupPartition, shared by its two source files.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <set>

#include "brokerd/common/clock.h"
#include "group/group_partition.h"

namespace brokerd::group {

// A response a coroutine waits for on the group's shard: whoever completes the rebalance
// stores the value and cancels the timer.
template <typename T>
struct Waiter {
  explicit Waiter(boost::asio::any_io_executor ex) : timer(ex, boost::asio::steady_timer::time_point::max()) {}
  boost::asio::steady_timer timer;
  std::optional<T> value;
  void fulfil(T v) {
    if (value) return;
    value = std::move(v);
    timer.cancel();
  }
};

template <typename T>
boost::asio::awaitable<T> wait_for(std::shared_ptr<Waiter<T>> w) {
  while (!w->value) co_await w->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  co_return std::move(*w->value);
}

struct GroupPartition::Member {
  std::string id;
  std::optional<std::string> instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<Protocol> protocols;
  Bytes assignment;
  uint64_t join_order = 0;
  bool supports_skip_assignment = false;
  std::shared_ptr<Waiter<JoinResult>> join_waiter;
  std::shared_ptr<Waiter<SyncResult>> sync_waiter;
  int64_t deadline_ms = 0;  // steady clock; the session expires after it
  std::unique_ptr<boost::asio::steady_timer> timer;
  bool timer_armed = false;

  const Bytes* metadata_for(const std::optional<std::string>& protocol) const {
    if (!protocol) return nullptr;
    for (const auto& p : protocols)
      if (p.name == *protocol) return &p.metadata;
    return nullptr;
  }
};

struct GroupPartition::Group {
  explicit Group(boost::asio::any_io_executor ex, std::string group_id)
      : id(std::move(group_id)), join_timer(ex), sync_timer(ex) {}
  std::string id;
  GroupState state = GroupState::empty;
  std::string protocol_type;
  std::optional<std::string> protocol_name;
  int32_t generation = 0;
  std::optional<std::string> leader;
  std::map<std::string, Member> members;
  std::map<std::string, std::unique_ptr<boost::asio::steady_timer>> pending;  // told MEMBER_ID_REQUIRED
  std::map<std::string, std::string> static_members;                          // instance id -> member id
  std::map<OffsetKey, OffsetEntry> offsets;
  // Offsets sent to open transactions, by producer id: installed when the transaction's
  // COMMIT marker reaches the offsets partition, dropped at its ABORT. A plain commit of the
  // same partition written after the transactional one supersedes it (the later record wins).
  std::map<int64_t, std::map<OffsetKey, PendingTxnOffset>> txn_offsets;
  int64_t state_timestamp = -1;  // wall clock of the last state change
  boost::asio::steady_timer join_timer;
  int64_t join_deadline_ms = 0;
  // Members that have not sent SyncGroup since the join phase completed, and the timer that
  // removes them after the rebalance timeout.
  std::set<std::string> pending_sync;
  boost::asio::steady_timer sync_timer;
  bool initial_delay = false;
  int64_t initial_remaining_ms = 0;
  bool new_member_added = false;
  uint64_t next_join_order = 0;

  bool all_joined() const {
    if (!pending.empty()) return false;
    for (const auto& [_, m] : members)
      if (!m.join_waiter) return false;
    return true;
  }
  int32_t max_rebalance_timeout() const {
    int32_t t = 0;
    for (const auto& [_, m] : members) t = std::max(t, m.rebalance_timeout_ms);
    return t;
  }
  bool static_fenced(const std::string& member_id, const std::optional<std::string>& instance_id) const {
    if (!instance_id) return false;
    auto it = static_members.find(*instance_id);
    return it != static_members.end() && it->second != member_id;
  }
};

}  // namespace brokerd::group
