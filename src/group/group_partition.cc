// Membership of classic groups: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and the
// rebalance state machine (Empty -> PreparingRebalance -> CompletingRebalance -> Stable).
#include <algorithm>

#include "brokerd/common/logger.h"
#include "brokerd/protocol/uuid.h"
#include "group/group_internal.h"

namespace brokerd::group {

std::string_view state_name(GroupState s) {
  switch (s) {
    case GroupState::empty: return "Empty";
    case GroupState::preparing_rebalance: return "PreparingRebalance";
    case GroupState::completing_rebalance: return "CompletingRebalance";
    case GroupState::stable: return "Stable";
    case GroupState::dead: return "Dead";
  }
  return "Unknown";
}

namespace {

JoinResult join_error(ErrorCode e, std::string member_id = {}) {
  JoinResult r;
  r.error = e;
  r.member_id = std::move(member_id);
  return r;
}

SyncResult sync_error(ErrorCode e) {
  SyncResult r;
  r.error = e;
  return r;
}

bool same_protocols(const std::vector<Protocol>& a, const std::vector<Protocol>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].metadata != b[i].metadata) return false;
  return true;
}

}  // namespace

GroupPartition::GroupPartition(boost::asio::any_io_executor ex, int32_t partition, const Settings& settings,
                               Appender append, WallClock clock)
    : ex_(std::move(ex)), partition_(partition), settings_(settings), append_(std::move(append)),
      clock_(std::move(clock)) {}

GroupPartition::~GroupPartition() = default;

GroupPartition::Group* GroupPartition::find(const std::string& id) const {
  auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : it->second.get();
}

GroupPartition::GroupPtr GroupPartition::get_or_create(const std::string& id) {
  auto& slot = groups_[id];
  if (!slot) {
    slot = std::make_shared<Group>(ex_, id);
    slot->state_timestamp = clock_();
  }
  return slot;
}

void GroupPartition::maybe_drop(const GroupPtr& g) {
  if (g->state == GroupState::empty && g->members.empty() && g->pending.empty() && g->offsets.empty() &&
      g->generation == 0) {
    g->join_timer.cancel();
    groups_.erase(g->id);
  }
}

void GroupPartition::set_state(Group& g, GroupState s) {
  g.state = s;
  g.state_timestamp = clock_();
}

bool GroupPartition::supports_protocols(const Group& g, const JoinRequest& req) const {
  if (req.protocol_type.empty() || req.protocols.empty()) return false;
  if (g.members.empty()) return true;
  if (g.protocol_type != req.protocol_type) return false;
  // Some protocol of the request must be supported by every current member.
  for (const auto& p : req.protocols) {
    bool everyone = std::all_of(g.members.begin(), g.members.end(), [&](const auto& kv) {
      return kv.second.metadata_for(p.name) != nullptr;
    });
    if (everyone) return true;
  }
  return false;
}

std::optional<std::string> GroupPartition::select_protocol(const Group& g) const {
  if (g.members.empty()) return std::nullopt;
  const Member& first = g.members.begin()->second;
  std::vector<std::string> candidates;
  for (const auto& p : first.protocols) {
    bool everyone = std::all_of(g.members.begin(), g.members.end(),
                                [&](const auto& kv) { return kv.second.metadata_for(p.name) != nullptr; });
    if (everyone) candidates.push_back(p.name);
  }
  if (candidates.empty()) return std::nullopt;
  // Each member votes for the first candidate in its own order of preference.
  std::map<std::string, int> votes;
  for (const auto& [_, m] : g.members)
    for (const auto& p : m.protocols)
      if (std::find(candidates.begin(), candidates.end(), p.name) != candidates.end()) {
        ++votes[p.name];
        break;
      }
  std::string best = candidates.front();
  for (const auto& c : candidates)
    if (votes[c] > votes[best]) best = c;
  return best;
}

boost::asio::awaitable<JoinResult> GroupPartition::join(JoinRequest req) {
  if (!loaded_) co_return join_error(not_ready(), req.member_id);
  if (req.group_id.empty()) co_return join_error(ErrorCode::invalid_group_id, req.member_id);
  if (req.session_timeout_ms < settings_.min_session_timeout_ms ||
      req.session_timeout_ms > settings_.max_session_timeout_ms)
    co_return join_error(ErrorCode::invalid_session_timeout, req.member_id);
  if (req.rebalance_timeout_ms <= 0) req.rebalance_timeout_ms = req.session_timeout_ms;

  bool is_new = req.member_id.empty();
  if (!is_new && !find(req.group_id)) co_return join_error(ErrorCode::unknown_member_id, req.member_id);
  GroupPtr g = get_or_create(req.group_id);
  if (g->state == GroupState::dead) co_return join_error(ErrorCode::coordinator_not_available, req.member_id);
  if (!supports_protocols(*g, req)) {
    maybe_drop(g);
    co_return join_error(ErrorCode::inconsistent_group_protocol, req.member_id);
  }
  bool known = !is_new && (g->members.contains(req.member_id) || g->pending.contains(req.member_id));
  bool static_known = req.instance_id && g->static_members.contains(*req.instance_id);
  if (!known && !static_known && g->members.size() >= static_cast<size_t>(settings_.max_size)) {
    co_return join_error(ErrorCode::group_max_size_reached, req.member_id);
  }
  if (is_new) co_return co_await join_new(g, std::move(req));
  co_return co_await join_existing(g, std::move(req));
}

boost::asio::awaitable<JoinResult> GroupPartition::join_new(GroupPtr g, JoinRequest req) {
  std::string id = req.client_id + "-" + protocol::Uuid::random().to_string();
  if (req.instance_id) {
    auto it = g->static_members.find(*req.instance_id);
    if (it != g->static_members.end()) co_return co_await replace_static(g, std::move(req), it->second);
    co_return co_await add_and_wait(g, std::move(req), std::move(id));
  }
  if (req.require_known_member_id) {
    // KIP-394: the member must come back with this id, so a client that retries after a lost
    // response does not leave a ghost member behind.
    add_pending(g, id, req.session_timeout_ms);
    co_return join_error(ErrorCode::member_id_required, id);
  }
  co_return co_await add_and_wait(g, std::move(req), std::move(id));
}

boost::asio::awaitable<JoinResult> GroupPartition::join_existing(GroupPtr g, JoinRequest req) {
  if (g->pending.contains(req.member_id)) {
    if (req.instance_id && g->static_fenced(req.member_id, req.instance_id))
      co_return join_error(ErrorCode::fenced_instance_id, req.member_id);
    g->pending.erase(req.member_id);
    std::string id = req.member_id;
    co_return co_await add_and_wait(g, std::move(req), std::move(id));
  }
  if (g->static_fenced(req.member_id, req.instance_id)) co_return join_error(ErrorCode::fenced_instance_id, req.member_id);
  auto it = g->members.find(req.member_id);
  if (it == g->members.end()) co_return join_error(ErrorCode::unknown_member_id, req.member_id);
  Member& m = it->second;
  switch (g->state) {
    case GroupState::preparing_rebalance:
      co_return co_await rejoin_and_wait(g, m, req);
    case GroupState::completing_rebalance:
      if (same_protocols(m.protocols, req.protocols)) {
        // The member missed the join response: send it again.
        touch(g, m);
        co_return current_join_result(*g, m, g->leader == m.id);
      }
      update_member(m, req);
      prepare_rebalance(g);
      co_return co_await rejoin_and_wait(g, m, req);
    case GroupState::stable:
      if (g->leader == m.id || !same_protocols(m.protocols, req.protocols)) {
        update_member(m, req);
        prepare_rebalance(g);
        co_return co_await rejoin_and_wait(g, m, req);
      }
      touch(g, m);
      co_return current_join_result(*g, m, false);
    case GroupState::empty:
    case GroupState::dead:
      break;
  }
  co_return join_error(ErrorCode::unknown_member_id, req.member_id);
}

boost::asio::awaitable<JoinResult> GroupPartition::replace_static(GroupPtr g, JoinRequest req, std::string old_id) {
  auto old_it = g->members.find(old_id);
  if (old_it == g->members.end()) {
    g->static_members.erase(*req.instance_id);
    std::string id = req.client_id + "-" + protocol::Uuid::random().to_string();
    co_return co_await add_and_wait(g, std::move(req), std::move(id));
  }
  std::string new_id = req.client_id + "-" + protocol::Uuid::random().to_string();
  Member replacement = std::move(old_it->second);
  // The old incarnation's pending calls learn that it was replaced.
  if (replacement.join_waiter) replacement.join_waiter->fulfil(join_error(ErrorCode::fenced_instance_id, old_id));
  if (replacement.sync_waiter) replacement.sync_waiter->fulfil(sync_error(ErrorCode::fenced_instance_id));
  replacement.join_waiter.reset();
  replacement.sync_waiter.reset();
  if (replacement.timer) replacement.timer->cancel();
  replacement.timer.reset();
  replacement.timer_armed = false;
  g->members.erase(old_it);
  replacement.id = new_id;
  auto& m = g->members.emplace(new_id, std::move(replacement)).first->second;
  g->static_members[*req.instance_id] = new_id;
  if (g->pending_sync.erase(old_id)) g->pending_sync.insert(new_id);
  bool was_leader = g->leader == old_id;
  if (was_leader) g->leader = new_id;
  update_member(m, req);
  touch(g, m);
  module_logger("group")->info("group {}: static member {} replaced {} by {}", g->id, *req.instance_id, old_id, new_id);

  // In Stable the restart keeps the generation unless it changes the protocol the group would
  // select. In CompletingRebalance it always rebalances: the leader is assigning to the old id.
  if (g->state == GroupState::stable && select_protocol(*g) == g->protocol_name) {
    persist_group(*g);
    if (was_leader && !req.supports_skip_assignment) {
      // Before KIP-814 a leader cannot be told to skip the assignment: name its old id as the
      // leader, so that it takes itself for a follower and asks SyncGroup for what it had.
      auto r = current_join_result(*g, m, false);
      r.leader = old_id;
      co_return r;
    }
    auto r = current_join_result(*g, m, was_leader);
    r.skip_assignment = was_leader;
    co_return r;
  }
  if (g->state != GroupState::preparing_rebalance) prepare_rebalance(g);
  co_return co_await rejoin_and_wait(g, m, req);
}

void GroupPartition::update_member(Member& m, const JoinRequest& req) {
  m.protocols = req.protocols;
  m.protocol_type = req.protocol_type;
  m.session_timeout_ms = req.session_timeout_ms;
  m.rebalance_timeout_ms = req.rebalance_timeout_ms;
  m.client_id = req.client_id;
  m.client_host = req.client_host;
  m.supports_skip_assignment = req.supports_skip_assignment;
}

boost::asio::awaitable<JoinResult> GroupPartition::add_and_wait(GroupPtr g, JoinRequest req, std::string id) {
  if (g->members.empty()) g->protocol_type = req.protocol_type;
  Member m;
  m.id = id;
  m.instance_id = req.instance_id;
  m.join_order = g->next_join_order++;
  update_member(m, req);
  auto& member = g->members.emplace(id, std::move(m)).first->second;
  if (req.instance_id) g->static_members[*req.instance_id] = id;
  if (!g->leader) g->leader = id;
  g->new_member_added = true;
  touch(g, member);
  if (g->state != GroupState::preparing_rebalance) prepare_rebalance(g);
  co_return co_await rejoin_and_wait(g, member, req);
}

boost::asio::awaitable<JoinResult> GroupPartition::rejoin_and_wait(GroupPtr g, Member& m, const JoinRequest& req) {
  update_member(m, req);
  if (m.join_waiter) m.join_waiter->fulfil(join_error(ErrorCode::rebalance_in_progress, m.id));
  auto waiter = std::make_shared<Waiter<JoinResult>>(ex_);
  m.join_waiter = waiter;
  touch(g, m);
  try_complete_join(g);
  co_return co_await wait_for(waiter);
}

JoinResult GroupPartition::current_join_result(const Group& g, const Member& m, bool with_members) const {
  JoinResult r;
  r.generation = g.generation;
  r.protocol_type = g.protocol_type;
  r.protocol_name = g.protocol_name;
  r.leader = g.leader.value_or("");
  r.member_id = m.id;
  if (with_members) {
    for (const auto& [id, other] : g.members) {
      const Bytes* md = other.metadata_for(g.protocol_name);
      r.members.push_back({id, other.instance_id, md ? *md : Bytes{}});
    }
  }
  return r;
}

void GroupPartition::prepare_rebalance(const GroupPtr& g) {
  if (g->state == GroupState::completing_rebalance) {
    for (auto& [_, m] : g->members) {
      m.assignment.clear();
      if (m.sync_waiter) {
        m.sync_waiter->fulfil(sync_error(ErrorCode::rebalance_in_progress));
        m.sync_waiter.reset();
      }
    }
  }
  g->pending_sync.clear();
  g->sync_timer.cancel();
  int64_t now = steady_clock_ms();
  if (g->state == GroupState::empty && settings_.initial_rebalance_delay_ms > 0) {
    // A new group waits a little for more members, so the first ones do not rebalance once
    // per arrival.
    int64_t delay = std::min<int64_t>(settings_.initial_rebalance_delay_ms, g->max_rebalance_timeout());
    g->initial_delay = true;
    g->initial_remaining_ms = std::max<int64_t>(g->max_rebalance_timeout() - delay, 0);
    g->new_member_added = false;
    g->join_deadline_ms = now + delay;
  } else {
    g->initial_delay = false;
    g->join_deadline_ms = now + g->max_rebalance_timeout();
  }
  set_state(*g, GroupState::preparing_rebalance);
  module_logger("group")->debug("group {} preparing rebalance (generation {})", g->id, g->generation);
  arm_join_timer(g);
}

void GroupPartition::arm_join_timer(const GroupPtr& g) {
  // Re-arming cancels the previous wait, whose handler then sees operation_aborted.
  g->join_timer.expires_at(boost::asio::steady_timer::clock_type::now() +
                           std::chrono::milliseconds(std::max<int64_t>(g->join_deadline_ms - steady_clock_ms(), 0)));
  std::weak_ptr<Group> wg = g;
  g->join_timer.async_wait([this, wg](const boost::system::error_code& ec) {
    if (!ec) on_join_timer(wg);
  });
}

void GroupPartition::on_join_timer(const std::weak_ptr<Group>& wg) {
  GroupPtr g = wg.lock();
  if (!g || g->state != GroupState::preparing_rebalance) return;
  int64_t now = steady_clock_ms();
  if (now < g->join_deadline_ms) return arm_join_timer(g);
  if (g->initial_delay) {
    if (g->new_member_added && g->initial_remaining_ms > 0) {
      int64_t delay = std::min<int64_t>(settings_.initial_rebalance_delay_ms, g->initial_remaining_ms);
      g->initial_remaining_ms -= delay;
      g->new_member_added = false;
      g->join_deadline_ms = now + delay;
      return arm_join_timer(g);
    }
    // The delay is over: members told MEMBER_ID_REQUIRED that have not come back are left out.
    g->initial_delay = false;
  }
  complete_join(g);
}

void GroupPartition::try_complete_join(const GroupPtr& g) {
  if (g->state == GroupState::preparing_rebalance && !g->initial_delay && g->all_joined()) complete_join(g);
}

void GroupPartition::complete_join(const GroupPtr& g) {
  // Dynamic members that have not rejoined are removed; static ones stay until their session
  // expires (KIP-345).
  std::vector<std::string> missing;
  for (const auto& [id, m] : g->members)
    if (!m.join_waiter && !m.instance_id) missing.push_back(id);
  for (const auto& id : missing) erase_member(*g, id, ErrorCode::unknown_member_id);
  auto joined = [](const auto& kv) { return kv.second.join_waiter != nullptr; };
  if (!g->members.empty() && std::none_of(g->members.begin(), g->members.end(), joined)) {
    // Only static members that have not rejoined are left: wait another rebalance timeout.
    g->join_deadline_ms = steady_clock_ms() + g->max_rebalance_timeout();
    arm_join_timer(g);
    return;
  }
  ++g->generation;
  g->initial_delay = false;
  if (g->members.empty()) {
    g->protocol_name.reset();
    g->leader.reset();
    set_state(*g, GroupState::empty);
    module_logger("group")->info("group {} is empty at generation {}", g->id, g->generation);
    persist_group(*g);
    return;
  }
  g->protocol_name = select_protocol(*g);
  if (!g->leader || !g->members.contains(*g->leader) || !g->members.at(*g->leader).join_waiter) {
    // The leader must be a member that rejoined: it computes the assignment.
    const Member* first = nullptr;
    for (const auto& [_, m] : g->members)
      if (m.join_waiter && (!first || m.join_order < first->join_order)) first = &m;
    g->leader = first->id;
  }
  set_state(*g, GroupState::completing_rebalance);
  module_logger("group")->info("group {} generation {}: {} members, protocol {}, leader {}", g->id, g->generation,
                               g->members.size(), g->protocol_name.value_or("-"), *g->leader);
  g->pending_sync.clear();
  for (auto& [id, m] : g->members) {
    g->pending_sync.insert(id);
    if (!m.join_waiter) continue;  // a static member that has not rejoined yet
    auto r = current_join_result(*g, m, id == *g->leader);
    auto w = std::move(m.join_waiter);
    m.join_waiter.reset();
    touch(g, m);
    w->fulfil(std::move(r));
  }
  arm_sync_timer(g);
}

void GroupPartition::arm_sync_timer(const GroupPtr& g) {
  g->sync_timer.expires_after(std::chrono::milliseconds(g->max_rebalance_timeout()));
  std::weak_ptr<Group> wg = g;
  g->sync_timer.async_wait([this, wg, generation = g->generation](const boost::system::error_code& ec) {
    if (!ec) on_sync_timer(wg, generation);
  });
}

void GroupPartition::on_sync_timer(const std::weak_ptr<Group>& wg, int32_t generation) {
  // Members that have not sent SyncGroup within the rebalance timeout of the join phase are
  // removed, so a leader that never assigns cannot hold the group in CompletingRebalance.
  GroupPtr g = wg.lock();
  if (!g || g->generation != generation || g->pending_sync.empty()) return;
  if (g->state != GroupState::completing_rebalance && g->state != GroupState::stable) return;
  std::vector<std::string> gone(g->pending_sync.begin(), g->pending_sync.end());
  module_logger("group")->info("group {}: {} members did not sync within the rebalance timeout", g->id, gone.size());
  for (const auto& id : gone) erase_member(*g, id, ErrorCode::unknown_member_id);
  prepare_rebalance(g);
  try_complete_join(g);
}

void GroupPartition::erase_member(Group& g, const std::string& member_id, ErrorCode answer) {
  auto it = g.members.find(member_id);
  if (it == g.members.end()) return;
  Member& m = it->second;
  if (m.join_waiter) m.join_waiter->fulfil(join_error(answer, member_id));
  if (m.sync_waiter) m.sync_waiter->fulfil(sync_error(answer));
  if (m.timer) m.timer->cancel();
  g.pending_sync.erase(member_id);
  if (m.instance_id) {
    auto s = g.static_members.find(*m.instance_id);
    if (s != g.static_members.end() && s->second == member_id) g.static_members.erase(s);
  }
  g.members.erase(it);
  if (g.leader == member_id) {
    g.leader.reset();
    if (!g.members.empty()) g.leader = g.members.begin()->first;
  }
}

void GroupPartition::remove_member(const GroupPtr& g, const std::string& member_id, ErrorCode answer) {
  erase_member(*g, member_id, answer);
  switch (g->state) {
    case GroupState::stable:
    case GroupState::completing_rebalance:
      prepare_rebalance(g);
      try_complete_join(g);
      break;
    case GroupState::preparing_rebalance:
      try_complete_join(g);
      break;
    default:
      break;
  }
}

void GroupPartition::touch(const GroupPtr& g, Member& m) {
  m.deadline_ms = steady_clock_ms() + m.session_timeout_ms;
  if (m.timer_armed) return;  // the running wait re-reads the deadline when it fires
  if (!m.timer) m.timer = std::make_unique<boost::asio::steady_timer>(ex_);
  m.timer_armed = true;
  m.timer->expires_after(std::chrono::milliseconds(m.session_timeout_ms));
  std::weak_ptr<Group> wg = g;
  m.timer->async_wait([this, wg, id = m.id](const boost::system::error_code& ec) {
    auto sg = wg.lock();
    if (!sg) return;
    auto it = sg->members.find(id);
    if (it == sg->members.end()) return;
    it->second.timer_armed = false;
    if (!ec) on_session_timer(wg, id);
  });
}

void GroupPartition::on_session_timer(const std::weak_ptr<Group>& wg, const std::string& member_id) {
  GroupPtr g = wg.lock();
  if (!g) return;
  auto it = g->members.find(member_id);
  if (it == g->members.end()) return;
  Member& m = it->second;
  int64_t now = steady_clock_ms();
  // A member waiting for a join or sync answer is alive: it cannot heartbeat meanwhile.
  if (now < m.deadline_ms || m.join_waiter || m.sync_waiter) {
    if (now >= m.deadline_ms) m.deadline_ms = now + m.session_timeout_ms;
    m.timer_armed = true;
    m.timer->expires_after(std::chrono::milliseconds(m.deadline_ms - now));
    m.timer->async_wait([this, wg, id = member_id](const boost::system::error_code& ec) {
      auto sg = wg.lock();
      if (!sg) return;
      auto mit = sg->members.find(id);
      if (mit == sg->members.end()) return;
      mit->second.timer_armed = false;
      if (!ec) on_session_timer(wg, id);
    });
    return;
  }
  module_logger("group")->info("group {}: member {} session expired after {} ms", g->id, member_id,
                               m.session_timeout_ms);
  remove_member(g, member_id, ErrorCode::unknown_member_id);
  if (g->state == GroupState::empty) maybe_drop(g);
}

void GroupPartition::add_pending(const GroupPtr& g, const std::string& member_id, int32_t session_timeout_ms) {
  auto timer = std::make_unique<boost::asio::steady_timer>(ex_);
  timer->expires_after(std::chrono::milliseconds(session_timeout_ms));
  std::weak_ptr<Group> wg = g;
  timer->async_wait([this, wg, member_id](const boost::system::error_code& ec) {
    if (ec) return;
    auto sg = wg.lock();
    if (!sg || !sg->pending.erase(member_id)) return;
    try_complete_join(sg);
    maybe_drop(sg);
  });
  g->pending[member_id] = std::move(timer);
}

boost::asio::awaitable<SyncResult> GroupPartition::sync(SyncRequest req) {
  if (!loaded_) co_return sync_error(not_ready());
  auto git = groups_.find(req.group_id);
  if (git == groups_.end()) co_return sync_error(ErrorCode::unknown_member_id);
  GroupPtr g = git->second;
  if (g->state == GroupState::dead) co_return sync_error(ErrorCode::coordinator_not_available);
  if (g->static_fenced(req.member_id, req.instance_id)) co_return sync_error(ErrorCode::fenced_instance_id);
  auto it = g->members.find(req.member_id);
  if (it == g->members.end()) co_return sync_error(ErrorCode::unknown_member_id);
  if (req.generation != g->generation) co_return sync_error(ErrorCode::illegal_generation);
  if ((req.protocol_type && *req.protocol_type != g->protocol_type) ||
      (req.protocol_name && *req.protocol_name != g->protocol_name))
    co_return sync_error(ErrorCode::inconsistent_group_protocol);
  Member& m = it->second;
  switch (g->state) {
    case GroupState::empty:
    case GroupState::dead:
      co_return sync_error(ErrorCode::unknown_member_id);
    case GroupState::preparing_rebalance:
      co_return sync_error(ErrorCode::rebalance_in_progress);
    case GroupState::stable: {
      g->pending_sync.erase(m.id);
      touch(g, m);
      SyncResult r;
      r.protocol_type = g->protocol_type;
      r.protocol_name = g->protocol_name;
      r.assignment = m.assignment;
      co_return r;
    }
    case GroupState::completing_rebalance:
      break;
  }
  if (m.sync_waiter) m.sync_waiter->fulfil(sync_error(ErrorCode::rebalance_in_progress));
  auto waiter = std::make_shared<Waiter<SyncResult>>(ex_);
  m.sync_waiter = waiter;
  g->pending_sync.erase(m.id);
  touch(g, m);
  if (g->leader == m.id) {
    for (auto& [id, member] : g->members) member.assignment.clear();
    for (auto& [id, assignment] : req.assignments) {
      auto mit = g->members.find(id);
      if (mit != g->members.end()) mit->second.assignment = std::move(assignment);
    }
    ErrorCode e = persist_group(*g);
    if (e == ErrorCode::none) {
      set_state(*g, GroupState::stable);
      for (auto& [id, member] : g->members) {
        if (!member.sync_waiter) continue;
        SyncResult r;
        r.protocol_type = g->protocol_type;
        r.protocol_name = g->protocol_name;
        r.assignment = member.assignment;
        auto w = std::move(member.sync_waiter);
        member.sync_waiter.reset();
        w->fulfil(std::move(r));
      }
    } else {
      for (auto& [id, member] : g->members) {
        member.assignment.clear();
        if (member.sync_waiter) {
          member.sync_waiter->fulfil(sync_error(e));
          member.sync_waiter.reset();
        }
      }
      prepare_rebalance(g);
    }
  }
  co_return co_await wait_for(waiter);
}

ErrorCode GroupPartition::heartbeat(const std::string& group_id, const std::string& member_id,
                                    const std::optional<std::string>& instance_id, int32_t generation) {
  if (!loaded_) return not_ready();
  auto git = groups_.find(group_id);
  if (git == groups_.end()) return ErrorCode::unknown_member_id;
  GroupPtr g = git->second;
  if (g->state == GroupState::dead) return ErrorCode::coordinator_not_available;
  if (g->static_fenced(member_id, instance_id)) return ErrorCode::fenced_instance_id;
  auto it = g->members.find(member_id);
  if (it == g->members.end()) return ErrorCode::unknown_member_id;
  if (generation != g->generation) return ErrorCode::illegal_generation;
  switch (g->state) {
    case GroupState::empty:
    case GroupState::dead:
      return ErrorCode::unknown_member_id;
    case GroupState::preparing_rebalance:
      touch(g, it->second);
      return ErrorCode::rebalance_in_progress;
    case GroupState::completing_rebalance:
    case GroupState::stable:
      touch(g, it->second);
      return ErrorCode::none;
  }
  return ErrorCode::none;
}

LeaveResult GroupPartition::leave(const std::string& group_id, const std::vector<LeaveMember>& members) {
  LeaveResult out;
  if (!loaded_) {
    out.error = not_ready();
    return out;
  }
  auto git = groups_.find(group_id);
  if (git == groups_.end()) {
    out.error = ErrorCode::unknown_member_id;
    return out;
  }
  GroupPtr g = git->second;
  if (g->state == GroupState::dead) {
    out.error = ErrorCode::coordinator_not_available;
    return out;
  }
  for (const auto& lm : members) {
    std::string id = lm.member_id;
    if (lm.instance_id) {
      auto s = g->static_members.find(*lm.instance_id);
      if (s == g->static_members.end()) {
        out.members.push_back(ErrorCode::unknown_member_id);
        continue;
      }
      if (!id.empty() && s->second != id) {
        out.members.push_back(ErrorCode::fenced_instance_id);
        continue;
      }
      id = s->second;
    }
    if (g->pending.erase(id)) {
      out.members.push_back(ErrorCode::none);
      try_complete_join(g);
      continue;
    }
    if (!g->members.contains(id)) {
      out.members.push_back(ErrorCode::unknown_member_id);
      continue;
    }
    module_logger("group")->info("group {}: member {} left", g->id, id);
    remove_member(g, id, ErrorCode::unknown_member_id);
    out.members.push_back(ErrorCode::none);
  }
  maybe_drop(g);
  return out;
}

void GroupPartition::shutdown() {
  for (auto& [_, g] : groups_) {
    g->join_timer.cancel();
    g->sync_timer.cancel();
    g->pending.clear();
    for (auto& [id, m] : g->members) {
      if (m.timer) m.timer->cancel();
      if (m.join_waiter) m.join_waiter->fulfil(join_error(ErrorCode::not_coordinator, id));
      if (m.sync_waiter) m.sync_waiter->fulfil(sync_error(ErrorCode::not_coordinator));
    }
  }
  groups_.clear();
  loaded_ = false;
}

void GroupPartition::resign() {
  shutdown();
  loading_groups_.clear();
  loading_offsets_.clear();
  loading_txn_.clear();
  txn_groups_.clear();
  coordinating_ = false;
}

void GroupPartition::begin_loading() {
  shutdown();
  loading_groups_.clear();
  loading_offsets_.clear();
  loading_txn_.clear();
  txn_groups_.clear();
  coordinating_ = true;
}

}  // namespace brokerd::group
