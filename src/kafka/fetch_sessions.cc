#include "brokerd/kafka/fetch_sessions.h"

#include <algorithm>
#include <climits>
#include <functional>

namespace brokerd::kafka {

using protocol::ErrorCode;

size_t SessionKeyHash::operator()(const SessionKey& k) const {
  size_t h = std::hash<std::string>{}(k.topic);
  for (uint8_t b : k.topic_id.bytes) h = h * 31 + b;
  return h * 31 + static_cast<size_t>(static_cast<uint32_t>(k.partition));
}

void FetchSessionCache::Session::reindex() {
  index.clear();
  index.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) index[order[i].key] = i;
}

FetchSessionCache::FetchSessionCache(size_t slots, uint64_t seed) : slots_(slots), rng_(static_cast<uint32_t>(seed)) {}

size_t FetchSessionCache::size() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

size_t FetchSessionCache::partitions() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [_, s] : sessions_) n += s.order.size();
  return n;
}

int32_t FetchSessionCache::new_id() {
  std::uniform_int_distribution<int32_t> pick(1, INT32_MAX);
  int32_t id = pick(rng_);
  while (sessions_.contains(id)) id = pick(rng_);
  return id;
}

bool FetchSessionCache::make_room(size_t size, int64_t now_ms) {
  if (sessions_.size() < slots_) return true;
  if (sessions_.empty()) return false;
  auto lru = std::min_element(sessions_.begin(), sessions_.end(),
                              [](const auto& a, const auto& b) { return a.second.last_used_ms < b.second.last_used_ms; });
  if (now_ms - lru->second.last_used_ms >= kEvictableAfterMs) {
    sessions_.erase(lru);
    return true;
  }
  auto smallest = std::min_element(sessions_.begin(), sessions_.end(),
                                   [](const auto& a, const auto& b) { return a.second.order.size() < b.second.order.size(); });
  if (smallest->second.order.size() < size) {
    sessions_.erase(smallest);
    return true;
  }
  return false;
}

FetchSessionCache::Context FetchSessionCache::begin(const FetchSessionRequest& r, int64_t now_ms) {
  std::lock_guard lock(mu_);
  Context c;
  if (r.epoch < -1) {
    c.error = ErrorCode::invalid_fetch_session_epoch;
    return c;
  }
  if (r.epoch <= 0) {
    // A full fetch: it closes the session it names, and with epoch 0 opens a new one.
    if (r.session_id != 0) sessions_.erase(r.session_id);
    Session s;
    for (const auto& p : r.partitions) {
      if (s.index.contains(p.key)) continue;  // named twice: the first one counts
      s.index[p.key] = s.order.size();
      s.order.push_back(p);
    }
    c.partitions = s.order;
    if (r.epoch == 0 && slots_ > 0 && make_room(s.order.size(), now_ms)) {
      s.id = new_id();
      s.replica_id = r.replica_id;
      s.topic_ids = r.topic_ids;
      s.last_used_ms = now_ms;
      c.session_id = s.id;
      sessions_.emplace(s.id, std::move(s));
    }
    return c;
  }
  auto it = r.session_id != 0 ? sessions_.find(r.session_id) : sessions_.end();
  if (it == sessions_.end() || it->second.replica_id != r.replica_id) {
    c.error = ErrorCode::fetch_session_id_not_found;
    return c;
  }
  Session& s = it->second;
  if (s.topic_ids != r.topic_ids) {
    c.error = ErrorCode::fetch_session_topic_id_error;
    return c;
  }
  if (r.epoch != s.next_epoch) {
    c.error = ErrorCode::invalid_fetch_session_epoch;
    return c;
  }
  for (const auto& p : r.partitions) {
    if (auto at = s.index.find(p.key); at != s.index.end()) {
      auto& cached = s.order[at->second];
      cached.fetch_offset = p.fetch_offset;
      cached.max_bytes = p.max_bytes;
      cached.current_leader_epoch = p.current_leader_epoch;
      cached.requester_log_start = p.requester_log_start;
    } else {
      s.index[p.key] = s.order.size();
      s.order.push_back(p);
    }
  }
  if (!r.forgotten.empty()) {
    bool removed = false;
    for (const auto& k : r.forgotten) {
      if (auto at = s.index.find(k); at != s.index.end()) {
        s.order[at->second].key.partition = -1;  // marked, removed below
        s.index.erase(at);
        removed = true;
      }
    }
    if (removed) {
      std::erase_if(s.order, [](const SessionPartition& p) { return p.key.partition < 0; });
      s.reindex();
    }
  }
  s.next_epoch = s.next_epoch == INT32_MAX ? 1 : s.next_epoch + 1;
  s.last_used_ms = now_ms;
  c.session_id = s.id;
  c.incremental = true;
  c.partitions = s.order;
  return c;
}

std::vector<bool> FetchSessionCache::finish(const Context& ctx, const std::vector<PartitionAnswer>& answers,
                                            int64_t now_ms) {
  std::vector<bool> include(ctx.partitions.size(), true);
  if (ctx.session_id == 0) return include;
  std::lock_guard lock(mu_);
  auto it = sessions_.find(ctx.session_id);
  if (it == sessions_.end()) return include;  // closed or evicted meanwhile: answer everything
  Session& s = it->second;
  s.last_used_ms = now_ms;
  bool moved = false;
  for (size_t i = 0; i < ctx.partitions.size() && i < answers.size(); ++i) {
    auto at = s.index.find(ctx.partitions[i].key);
    if (at == s.index.end()) continue;  // forgotten by a later request
    auto& cached = s.order[at->second];
    const auto& a = answers[i];
    const bool changed = a.has_records || a.error != ErrorCode::none || a.high_watermark != cached.high_watermark ||
                         a.last_stable_offset != cached.last_stable_offset ||
                         a.log_start_offset != cached.log_start_offset;
    include[i] = !ctx.incremental || changed;
    if (include[i]) {
      cached.high_watermark = a.high_watermark;
      cached.last_stable_offset = a.last_stable_offset;
      cached.log_start_offset = a.log_start_offset;
    }
    moved = moved || (ctx.incremental && a.has_records);
  }
  if (moved) {
    std::vector<bool> had_records(s.order.size(), false);
    for (size_t i = 0; i < ctx.partitions.size() && i < answers.size(); ++i) {
      if (!answers[i].has_records) continue;
      if (auto at = s.index.find(ctx.partitions[i].key); at != s.index.end()) had_records[at->second] = true;
    }
    std::vector<SessionPartition> order;
    order.reserve(s.order.size());
    for (size_t i = 0; i < s.order.size(); ++i)
      if (!had_records[i]) order.push_back(std::move(s.order[i]));
    for (size_t i = 0; i < s.order.size(); ++i)
      if (had_records[i]) order.push_back(std::move(s.order[i]));
    s.order = std::move(order);
    s.reindex();
  }
  return include;
}

}  // namespace brokerd::kafka
