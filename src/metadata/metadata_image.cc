#include "brokerd/metadata/metadata_image.h"

#include <algorithm>
#include <cstring>

namespace brokerd::metadata {

bool PartitionAssignment::hosted_by(int32_t node_id) const {
  return std::find(replicas.begin(), replicas.end(), node_id) != replicas.end();
}

const BrokerInfo* MetadataImage::broker(int32_t node_id) const {
  for (const auto& b : brokers)
    if (b.node_id == node_id) return &b;
  return nullptr;
}

bool MetadataImage::live(int32_t node_id) const {
  const BrokerInfo* b = broker(node_id);
  return b && !b->fenced;
}

std::vector<int32_t> MetadataImage::offline_replicas(const PartitionAssignment& a) const {
  std::vector<int32_t> out;
  for (int32_t r : a.replicas)
    if (!live(r)) out.push_back(r);
  return out;
}

BrokerEndpoint endpoint_for(const BrokerInfo& b, std::string_view listener) {
  for (const auto& e : b.endpoints)
    if (e.listener == listener) return e;
  return BrokerEndpoint{b.listener, b.host, b.port, 0};
}

void MetadataImage::seal() {
  owns_scram_credentials = false;
  owns_client_quotas = false;
  owns_tenant_limits = false;
  if (acls->index) return;
  std::vector<acl::Binding> all;
  all.reserve(acls->bindings.size());
  for (const auto& [id, b] : acls->bindings) all.push_back(b);
  acls = std::make_shared<const AclSet>(AclSet{acls->bindings, std::make_shared<const acl::Index>(all)});
}

std::optional<auth::ScramCredential> MetadataImage::scram_credential(const std::string& user,
                                                                     auth::ScramMechanism m) const {
  auto it = scram_credentials->find(user);
  if (it == scram_credentials->end()) return std::nullopt;
  auto c = it->second.find(m);
  if (c == it->second.end()) return std::nullopt;
  return c->second;
}

tenant::Usage MetadataImage::tenant_usage(const tenant::Pattern& p) const {
  tenant::Usage u;
  for_each_topic([&](const TopicPtr& t) {
    if (t->owner.empty() || !tenant::matches(p, t->owner)) return;
    ++u.topics;
    u.partitions += t->partition_count();
  });
  return u;
}

const MirrorLink* MetadataImage::link(std::string_view name) const {
  auto it = links.find(std::string(name));
  return it == links.end() ? nullptr : &it->second;
}

int32_t MetadataImage::live_brokers() const {
  int32_t n = 0;
  for (const auto& b : brokers) n += b.fenced ? 0 : 1;
  return n;
}

size_t MetadataImage::bucket_of(std::string_view name) { return std::hash<std::string_view>{}(name) % kBuckets; }

size_t MetadataImage::bucket_of(const protocol::Uuid& id) {
  uint64_t h;
  std::memcpy(&h, id.bytes.data() + 8, sizeof h);  // the random half of a v4 id
  return h % kBuckets;
}

const TopicMetadata* MetadataImage::topic(std::string_view name) const { return topic_ptr(name).get(); }

TopicPtr MetadataImage::topic_ptr(std::string_view name) const {
  const auto& bucket = by_name_[bucket_of(name)];
  if (!bucket) return nullptr;
  for (const auto& t : *bucket)
    if (t->name == name) return t;
  return nullptr;
}

const TopicMetadata* MetadataImage::topic(const protocol::Uuid& id) const {
  const auto& bucket = by_id_[bucket_of(id)];
  if (!bucket) return nullptr;
  for (const auto& t : *bucket)
    if (t->id == id) return t.get();
  return nullptr;
}

void MetadataImage::for_each_topic(const std::function<void(const TopicPtr&)>& fn) const {
  for (const auto& bucket : by_name_)
    if (bucket)
      for (const auto& t : *bucket) fn(t);
}

void MetadataImage::for_each_changed_topic(const MetadataImage& older,
                                           const std::function<void(const TopicPtr&, const TopicPtr&)>& fn) const {
  static const Bucket kEmpty;
  for (size_t i = 0; i < kBuckets; ++i) {
    if (by_name_[i] == older.by_name_[i]) continue;
    const Bucket& now = by_name_[i] ? *by_name_[i] : kEmpty;
    const Bucket& before = older.by_name_[i] ? *older.by_name_[i] : kEmpty;
    for (const auto& t : now) {
      auto it = std::find_if(before.begin(), before.end(), [&](const TopicPtr& o) { return o->name == t->name; });
      if (it == before.end()) {
        fn(nullptr, t);
      } else if (*it != t) {
        fn(*it, t);
      }
    }
    for (const auto& o : before) {
      bool kept = std::any_of(now.begin(), now.end(), [&](const TopicPtr& t) { return t->name == o->name; });
      if (!kept) fn(o, nullptr);
    }
  }
}

MetadataImage::Bucket& MetadataImage::writable(Buckets& buckets, size_t index) {
  // A bucket no other image shares is this builder's own (another thread could only take a
  // reference through an image that holds it): change it in place. Otherwise copy on write.
  if (buckets[index] && buckets[index].use_count() == 1) return const_cast<Bucket&>(*buckets[index]);
  auto next = buckets[index] ? std::make_shared<Bucket>(*buckets[index]) : std::make_shared<Bucket>();
  Bucket& out = *next;
  buckets[index] = std::move(next);
  return out;
}

void MetadataImage::put(Buckets& buckets, size_t index, const TopicPtr& t, bool by_name) {
  Bucket& bucket = writable(buckets, index);
  auto same = [&](const TopicPtr& o) { return by_name ? o->name == t->name : o->id == t->id; };
  auto it = std::find_if(bucket.begin(), bucket.end(), same);
  if (it != bucket.end()) {
    *it = t;
  } else {
    bucket.push_back(t);
  }
}

void MetadataImage::erase(Buckets& buckets, size_t index, const TopicMetadata& t, bool by_name) {
  if (!buckets[index]) return;
  Bucket& bucket = writable(buckets, index);
  std::erase_if(bucket, [&](const TopicPtr& o) { return by_name ? o->name == t.name : o->id == t.id; });
  if (bucket.empty()) buckets[index] = nullptr;
}

void MetadataImage::put_topic(TopicPtr t) {
  if (auto old = topic_ptr(t->name)) {
    if (old->id != t->id) erase(by_id_, bucket_of(old->id), *old, false);
  } else {
    ++topic_count_;
  }
  put(by_id_, bucket_of(t->id), t, false);
  put(by_name_, bucket_of(t->name), t, true);
}

void MetadataImage::remove_topic(std::string_view name) {
  auto old = topic_ptr(name);
  if (!old) return;
  erase(by_id_, bucket_of(old->id), *old, false);
  erase(by_name_, bucket_of(old->name), *old, true);
  --topic_count_;
}

bool valid_topic_name(std::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace brokerd::metadata
