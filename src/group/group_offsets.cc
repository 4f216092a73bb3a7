// Committed offsets and the group records of __consumer_offsets: commit, fetch, delete,
// expiry, listing, and the replay that rebuilds the groups at start.
#include <algorithm>

#include "brokerd/common/logger.h"
#include "brokerd/protocol/messages/consumer_protocol_subscription.h"
#include "brokerd/protocol/wire.h"
#include "group/group_internal.h"

namespace brokerd::group {

ErrorCode append_error_to_group_error(ErrorCode e) {
  switch (e) {
    case ErrorCode::none:
      return ErrorCode::none;
    case ErrorCode::unknown_topic_or_partition:
    case ErrorCode::not_enough_replicas:
    case ErrorCode::not_enough_replicas_after_append:
    case ErrorCode::request_timed_out:
      return ErrorCode::coordinator_not_available;
    case ErrorCode::not_leader_or_follower:
    case ErrorCode::kafka_storage_error:
      return ErrorCode::not_coordinator;
    case ErrorCode::message_too_large:
    case ErrorCode::record_list_too_large:
      return ErrorCode::invalid_commit_offset_size;
    default:
      return ErrorCode::unknown_server_error;
  }
}

ErrorCode GroupPartition::append(std::vector<OffsetsRecord> records) {
  if (records.empty()) return ErrorCode::none;
  return append_error_to_group_error(append_(std::move(records)));
}

ErrorCode GroupPartition::persist_group(const Group& g) {
  StoredGroup s;
  s.protocol_type = g.protocol_type;
  s.generation = g.generation;
  s.protocol_name = g.protocol_name;
  s.leader = g.leader;
  s.state_timestamp = g.state_timestamp;
  for (const auto& [id, m] : g.members) {
    StoredMember sm;
    sm.member_id = id;
    sm.instance_id = m.instance_id;
    sm.client_id = m.client_id;
    sm.client_host = m.client_host;
    sm.rebalance_timeout_ms = m.rebalance_timeout_ms;
    sm.session_timeout_ms = m.session_timeout_ms;
    if (const Bytes* md = m.metadata_for(g.protocol_name)) sm.subscription = *md;
    sm.assignment = m.assignment;
    s.members.push_back(std::move(sm));
  }
  std::vector<OffsetsRecord> records;
  records.push_back({encode_group_key(g.id), encode_group_value(s)});
  return append(std::move(records));
}

// ---- loading ----

bool GroupPartition::replay(std::span<const std::byte> key, std::optional<std::span<const std::byte>> value,
                            std::string* why) {
  std::optional<RecordKey> k;
  try {
    k = decode_key(key);
  } catch (const std::exception& e) {
    if (why) *why = std::string("unreadable key: ") + e.what();
    return false;
  }
  if (!k) {
    if (why) *why = "a key version this coordinator does not know";
    return false;
  }
  try {
    if (auto* ok = std::get_if<OffsetRecordKey>(&*k)) {
      std::optional<OffsetEntry> entry;
      if (value) entry = decode_offset_value(*value);
      auto& offsets = loading_offsets_[ok->group_id];
      // A plain record after a transaction's record of the same partition wins over it.
      for (auto& [pid, groups] : loading_txn_) {
        auto g = groups.find(ok->group_id);
        if (g == groups.end()) continue;
        if (auto it = g->second.find(ok->key); it != g->second.end()) it->second.superseded = true;
      }
      if (entry) {
        offsets[ok->key] = std::move(*entry);
      } else {
        offsets.erase(ok->key);
      }
    } else {
      auto& gk = std::get<GroupRecordKey>(*k);
      std::optional<StoredGroup> group;
      if (value) group = decode_group_value(*value);
      loading_groups_[gk.group_id] = std::move(group);
    }
  } catch (const std::exception& e) {
    if (why) *why = std::string("unreadable value: ") + e.what();
    return false;
  }
  return true;
}

void GroupPartition::finish_loading() {
  size_t offsets = 0;
  for (auto& [id, stored] : loading_groups_) {
    if (!stored) continue;
    GroupPtr g = get_or_create(id);
    g->protocol_type = stored->protocol_type;
    g->generation = stored->generation;
    g->protocol_name = stored->protocol_name;
    g->leader = stored->leader;
    g->state_timestamp = stored->state_timestamp >= 0 ? stored->state_timestamp : clock_();
    for (auto& sm : stored->members) {
      Member m;
      m.id = sm.member_id;
      m.instance_id = sm.instance_id;
      m.client_id = sm.client_id;
      m.client_host = sm.client_host;
      m.session_timeout_ms = sm.session_timeout_ms;
      m.rebalance_timeout_ms = sm.rebalance_timeout_ms > 0 ? sm.rebalance_timeout_ms : sm.session_timeout_ms;
      m.protocol_type = stored->protocol_type;
      if (stored->protocol_name) m.protocols.push_back({*stored->protocol_name, std::move(sm.subscription)});
      m.assignment = std::move(sm.assignment);
      m.join_order = g->next_join_order++;
      auto& member = g->members.emplace(m.id, std::move(m)).first->second;
      if (member.instance_id) g->static_members[*member.instance_id] = member.id;
      // Members of a reloaded group must heartbeat within their session to stay.
      touch(g, member);
    }
    g->state = g->members.empty() ? GroupState::empty : GroupState::stable;
  }
  for (auto& [id, committed] : loading_offsets_) {
    if (committed.empty()) continue;
    GroupPtr g = get_or_create(id);
    offsets += committed.size();
    g->offsets = std::move(committed);
  }
  // Transactions still open at the end of the log keep their offsets pending.
  for (auto& [pid, groups] : loading_txn_) {
    for (auto& [id, pending] : groups) {
      if (pending.empty()) continue;
      GroupPtr g = get_or_create(id);
      g->txn_offsets[pid] = std::move(pending);
      txn_groups_[pid].insert(id);
    }
  }
  loading_groups_.clear();
  loading_offsets_.clear();
  loading_txn_.clear();
  loaded_ = true;
  if (!groups_.empty())
    module_logger("group")->info("{}-{}: loaded {} groups and {} committed offsets", kOffsetsTopic, partition_,
                                 groups_.size(), offsets);
}

// ---- offsets ----

ErrorCode GroupPartition::commit_error(const Group* g, const CommitRequest& req) const {
  if (!g) {
    // Only a commit outside any generation may create a group (a "simple" consumer).
    return req.generation < 0 ? ErrorCode::none : ErrorCode::illegal_generation;
  }
  if (g->state == GroupState::dead) return ErrorCode::coordinator_not_available;
  if (g->static_fenced(req.member_id, req.instance_id)) return ErrorCode::fenced_instance_id;
  if (req.generation < 0 && g->state == GroupState::empty) return ErrorCode::none;
  // Between JoinGroup and SyncGroup nobody owns partitions yet.
  if (g->state == GroupState::completing_rebalance) return ErrorCode::rebalance_in_progress;
  if (!g->members.contains(req.member_id)) return ErrorCode::unknown_member_id;
  if (req.generation != g->generation) return ErrorCode::illegal_generation;
  return ErrorCode::none;
}

GroupPartition::CommitRecords GroupPartition::commit_records(const CommitRequest& req,
                                                             std::vector<ErrorCode>& out) const {
  const int64_t now = clock_();
  CommitRecords c;
  for (size_t i = 0; i < req.offsets.size(); ++i) {
    const auto& [key, entry] = req.offsets[i];
    if (entry.metadata.size() > static_cast<size_t>(settings_.offset_metadata_max_bytes)) {
      out[i] = ErrorCode::offset_metadata_too_large;
      continue;
    }
    OffsetEntry e = entry;
    e.commit_timestamp = now;
    e.expire_timestamp = -1;
    c.records.push_back({encode_offset_key(req.group_id, key), encode_offset_value(e)});
    c.accepted.emplace_back(key, std::move(e));
  }
  return c;
}

std::vector<ErrorCode> GroupPartition::commit(const CommitRequest& req) {
  std::vector<ErrorCode> out(req.offsets.size(), ErrorCode::none);
  ErrorCode group_error = ErrorCode::none;
  if (!loaded_) {
    group_error = not_ready();
  } else if (req.group_id.empty()) {
    group_error = ErrorCode::invalid_group_id;
  } else {
    group_error = commit_error(find(req.group_id), req);
  }
  if (group_error != ErrorCode::none) {
    std::fill(out.begin(), out.end(), group_error);
    return out;
  }
  auto [records, accepted] = commit_records(req, out);
  if (records.empty()) return out;
  ErrorCode e = append(std::move(records));
  if (e != ErrorCode::none) {
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i] == ErrorCode::none) out[i] = e;
    return out;
  }
  GroupPtr g = get_or_create(req.group_id);
  for (auto& [key, entry] : accepted) {
    supersede_pending(*g, key);
    g->offsets[key] = std::move(entry);
  }
  return out;
}

FetchOffsetsResult GroupPartition::fetch(const std::string& group_id, const std::optional<std::vector<OffsetKey>>& keys,
                                         bool require_stable) const {
  FetchOffsetsResult out;
  if (!loaded_) {
    out.error = not_ready();
    return out;
  }
  const Group* g = find(group_id);
  auto unstable = [&](const OffsetKey& k) {
    if (!require_stable || !g) return false;
    for (const auto& [pid, pending] : g->txn_offsets)
      if (pending.contains(k)) return true;
    return false;
  };
  auto fetched = [&](const OffsetKey& k, const OffsetEntry& e) {
    FetchedOffset f{k, e};
    if (unstable(k)) {
      f.entry = OffsetEntry{};
      f.error = ErrorCode::unstable_offset_commit;
    }
    return f;
  };
  if (!keys) {
    if (g) {
      std::set<OffsetKey> listed;
      for (const auto& [k, e] : g->offsets) {
        out.offsets.push_back(fetched(k, e));
        listed.insert(k);
      }
      // Partitions only an open transaction has an offset for are unstable too.
      if (require_stable)
        for (const auto& [pid, pending] : g->txn_offsets)
          for (const auto& [k, p] : pending)
            if (listed.insert(k).second) out.offsets.push_back(fetched(k, OffsetEntry{}));
    }
    return out;
  }
  for (const auto& k : *keys) {
    OffsetEntry e;
    if (g) {
      auto it = g->offsets.find(k);
      if (it != g->offsets.end()) e = it->second;
    }
    out.offsets.push_back(fetched(k, e));
  }
  return out;
}

std::vector<GroupListing> GroupPartition::list() const {
  std::vector<GroupListing> out;
  for (const auto& [id, g] : groups_)
    if (g->state != GroupState::dead) out.push_back({id, g->protocol_type, g->state});
  return out;
}

GroupDescription GroupPartition::describe(const std::string& group_id) const {
  GroupDescription d;
  d.group_id = group_id;
  if (!loaded_) {
    d.error = not_ready();
    return d;
  }
  const Group* g = find(group_id);
  if (!g) return d;  // Dead, as Kafka describes a group it does not know
  d.state = g->state;
  d.protocol_type = g->protocol_type;
  bool stable = g->state == GroupState::stable;
  if (stable) d.protocol_name = g->protocol_name.value_or("");
  for (const auto& [id, m] : g->members) {
    DescribedMember dm{id, m.instance_id, m.client_id, m.client_host, {}, {}};
    if (stable) {
      if (const Bytes* md = m.metadata_for(g->protocol_name)) dm.metadata = *md;
      dm.assignment = m.assignment;
    }
    d.members.push_back(std::move(dm));
  }
  return d;
}

ErrorCode GroupPartition::delete_group(const std::string& group_id) {
  if (!loaded_) return not_ready();
  if (group_id.empty()) return ErrorCode::invalid_group_id;
  auto it = groups_.find(group_id);
  if (it == groups_.end() || it->second->state == GroupState::dead) return ErrorCode::group_id_not_found;
  GroupPtr g = it->second;
  if (g->state != GroupState::empty || !g->members.empty()) return ErrorCode::non_empty_group;
  std::vector<OffsetsRecord> records;
  for (const auto& [k, _] : g->offsets) records.push_back({encode_offset_key(group_id, k), std::nullopt});
  records.push_back({encode_group_key(group_id), std::nullopt});
  if (ErrorCode e = append(std::move(records)); e != ErrorCode::none) return e;
  g->state = GroupState::dead;
  g->join_timer.cancel();
  g->pending.clear();
  groups_.erase(it);
  module_logger("group")->info("group {} deleted", group_id);
  return ErrorCode::none;
}

std::vector<std::string> GroupPartition::subscribed_topics(const Group& g) const {
  std::vector<std::string> topics;
  if (g.protocol_type != "consumer") return topics;
  for (const auto& [_, m] : g.members) {
    const Bytes* md = m.metadata_for(g.protocol_name);
    if (!md || md->size() < 2) continue;
    try {
      protocol::Reader r(*md);
      int16_t version = r.i16();
      protocol::ConsumerProtocolSubscription sub;
      sub.decode(r, std::min<int16_t>(version, protocol::ConsumerProtocolSubscription::max_version));
      topics.insert(topics.end(), sub.topics.begin(), sub.topics.end());
    } catch (const std::exception&) {
      // Not a consumer subscription we can read: it protects no topic.
    }
  }
  return topics;
}

std::pair<ErrorCode, std::vector<ErrorCode>> GroupPartition::delete_offsets(const std::string& group_id,
                                                                            const std::vector<OffsetKey>& keys) {
  std::vector<ErrorCode> out(keys.size(), ErrorCode::none);
  if (!loaded_) return {not_ready(), {}};
  if (group_id.empty()) return {ErrorCode::invalid_group_id, {}};
  auto it = groups_.find(group_id);
  if (it == groups_.end() || it->second->state == GroupState::dead) return {ErrorCode::group_id_not_found, {}};
  GroupPtr g = it->second;
  std::vector<std::string> subscribed;
  if (g->state != GroupState::empty) {
    if (g->protocol_type != "consumer") return {ErrorCode::non_empty_group, {}};
    subscribed = subscribed_topics(*g);
  }
  std::vector<OffsetsRecord> records;
  std::vector<OffsetKey> removed;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (std::find(subscribed.begin(), subscribed.end(), keys[i].topic) != subscribed.end()) {
      out[i] = ErrorCode::group_subscribed_to_topic;
      continue;
    }
    if (g->offsets.contains(keys[i])) {
      records.push_back({encode_offset_key(group_id, keys[i]), std::nullopt});
      removed.push_back(keys[i]);
    }
  }
  if (ErrorCode e = append(std::move(records)); e != ErrorCode::none) return {e, {}};
  for (const auto& k : removed) g->offsets.erase(k);
  return {ErrorCode::none, std::move(out)};
}

size_t GroupPartition::expire_offsets() {
  if (!loaded_) return 0;
  int64_t now = clock_();
  size_t expired = 0;
  std::vector<std::string> drop;
  for (auto& [id, g] : groups_) {
    std::vector<OffsetKey> gone;
    bool empty = g->state == GroupState::empty;
    std::vector<std::string> subscribed;
    if (!empty) {
      // Only a consumer group's offsets of topics no member subscribes to may expire.
      if (g->protocol_type != "consumer") continue;
      subscribed = subscribed_topics(*g);
    }
    for (const auto& [k, e] : g->offsets) {
      if (!empty && std::find(subscribed.begin(), subscribed.end(), k.topic) != subscribed.end()) continue;
      bool due = false;
      if (e.expire_timestamp >= 0) {
        due = now >= e.expire_timestamp;
      } else {
        // A group that never had members (standalone consumers) counts from each commit.
        bool members_once = !g->protocol_type.empty();
        int64_t base = (empty && members_once && g->state_timestamp >= 0) ? g->state_timestamp : e.commit_timestamp;
        due = now - base >= settings_.offsets_retention_ms;
      }
      if (due) gone.push_back(k);
    }
    if (gone.empty()) continue;
    std::vector<OffsetsRecord> records;
    for (const auto& k : gone) records.push_back({encode_offset_key(id, k), std::nullopt});
    bool drop_group = empty && g->members.empty() && g->pending.empty() && gone.size() == g->offsets.size();
    if (drop_group) records.push_back({encode_group_key(id), std::nullopt});
    if (append(std::move(records)) != ErrorCode::none) continue;
    for (const auto& k : gone) g->offsets.erase(k);
    expired += gone.size();
    if (drop_group) drop.push_back(id);
  }
  for (const auto& id : drop) {
    auto it = groups_.find(id);
    it->second->join_timer.cancel();
    groups_.erase(it);
  }
  if (expired)
    module_logger("group")->info("{}-{}: expired {} committed offsets", kOffsetsTopic, partition_, expired);
  return expired;
}

}  // namespace brokerd::group
