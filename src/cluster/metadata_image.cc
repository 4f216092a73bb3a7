#include "brokerd/cluster/metadata_image.h"

namespace brokerd::cluster {

const BrokerInfo* MetadataImage::broker(int32_t node_id) const {
  for (const auto& b : brokers)
    if (b.node_id == node_id) return &b;
  return nullptr;
}

int32_t MetadataImage::live_brokers() const {
  int32_t n = 0;
  for (const auto& b : brokers) n += b.fenced ? 0 : 1;
  return n;
}

const TopicMetadata* MetadataImage::topic(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second.get();
}

const TopicMetadata* MetadataImage::topic(const protocol::Uuid& id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second.get();
}

void MetadataImage::put_topic(std::shared_ptr<const TopicMetadata> t) {
  if (auto old = by_name_.find(t->name); old != by_name_.end()) by_id_.erase(old->second->id);
  by_id_[t->id] = t;
  by_name_[t->name] = std::move(t);
}

void MetadataImage::remove_topic(std::string_view name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return;
  by_id_.erase(it->second->id);
  by_name_.erase(it);
}

bool valid_topic_name(std::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace brokerd::cluster
