#include "brokerd/partitions/mirror_status.h"

#include <algorithm>

namespace brokerd::partitions {

int64_t PartitionMirrorState::lag_ms(int64_t now_ms) const {
  if (lag_records() == 0) return 0;
  return caught_up_ms < 0 ? -1 : std::max<int64_t>(0, now_ms - caught_up_ms);
}

void MirrorStatus::set_link(const std::string& link, LinkState state) {
  std::lock_guard lock(mu_);
  links_[link] = std::move(state);
}

LinkState MirrorStatus::link(const std::string& link) const {
  std::lock_guard lock(mu_);
  auto it = links_.find(link);
  return it == links_.end() ? LinkState{} : it->second;
}

void MirrorStatus::set_partition(const std::string& link, const TopicPartition& tp, const PartitionMirrorState& state) {
  std::lock_guard lock(mu_);
  partitions_[{link, tp.topic, tp.partition}] = state;
}

std::optional<PartitionMirrorState> MirrorStatus::partition(const std::string& link, const TopicPartition& tp) const {
  std::lock_guard lock(mu_);
  auto it = partitions_.find({link, tp.topic, tp.partition});
  if (it == partitions_.end()) return std::nullopt;
  return it->second;
}

void MirrorStatus::drop_partition(const std::string& link, const TopicPartition& tp) {
  std::lock_guard lock(mu_);
  partitions_.erase({link, tp.topic, tp.partition});
}

void MirrorStatus::retain_links(const std::vector<std::string>& keep) {
  std::lock_guard lock(mu_);
  auto kept = [&](const std::string& l) { return std::find(keep.begin(), keep.end(), l) != keep.end(); };
  std::erase_if(links_, [&](const auto& kv) { return !kept(kv.first); });
  std::erase_if(partitions_, [&](const auto& kv) { return !kept(std::get<0>(kv.first)); });
}

std::vector<MirrorStatus::Entry> MirrorStatus::partitions() const {
  std::lock_guard lock(mu_);
  std::vector<Entry> out;
  out.reserve(partitions_.size());
  for (const auto& [key, state] : partitions_)
    out.push_back({std::get<0>(key), TopicPartition{std::get<1>(key), std::get<2>(key)}, state});
  return out;
}

std::map<std::string, LinkState> MirrorStatus::links() const {
  std::lock_guard lock(mu_);
  return links_;
}

}  // namespace brokerd::partitions
