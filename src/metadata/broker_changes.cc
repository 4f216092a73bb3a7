// The controller's changes of brokers (registered, fenced, unfenced) and of the producer id
// blocks it hands out, and the replay of their records.
#include <algorithm>

#include "brokerd/common/logger.h"
#include "brokerd/metadata/features.h"
#include "brokerd/metadata/metadata_store.h"
#include "metadata/metadata_records.h"

#include "metadata/record_replay.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

std::pair<ErrorCode, int64_t> MetadataStore::register_broker(BrokerInfo broker, const std::string& listener,
                                                             bool clean_shutdown) {
  std::lock_guard lock(write_mutex_);
  auto current = image();
  int64_t epoch = current->offset + 1;
  for (const auto& b : current->brokers) epoch = std::max(epoch, b.epoch + 1);
  broker.epoch = epoch;
  broker.fenced = true;
  broker.listener = listener;
  std::vector<Bytes> records{register_broker_record(broker)};
  for (auto& r : initial_feature_records(*current)) records.push_back(std::move(r));
  std::vector<PartitionUpdate> updates;
  if (!clean_shutdown) updates = elect_on_unclean_restart(*current, broker.node_id, default_min_isr_, injected_bugs_);
  add_change_records(records, updates);
  std::string why;
  if (ErrorCode e = commit(records, &why); e != ErrorCode::none) return {e, -1};
  module_logger("metadata")->info("registered broker {} at {}:{} (rack '{}', epoch {}{})", broker.node_id, broker.host,
                                 broker.port, broker.rack, epoch,
                                 clean_shutdown ? "" : fmt::format(", after an unclean stop: {} partition(s) changed",
                                                                   updates.size()));
  return {ErrorCode::none, epoch};
}

ErrorCode MetadataStore::set_broker_fenced(int32_t id, int64_t epoch, bool fenced, std::chrono::milliseconds wait) {
  std::lock_guard lock(write_mutex_);
  // Held for the whole decision: a published image may replace it meanwhile.
  auto current = image();
  const BrokerInfo* b = current->broker(id);
  if (!b || b->epoch != epoch) return ErrorCode::stale_broker_epoch;
  if (b->fenced == fenced) return ErrorCode::none;
  // With the leader elections it causes, in the same change.
  std::vector<Bytes> records{fence_broker_record(id, epoch, fenced)};
  const auto updates =
      fenced ? elect_on_fence(*current, id, default_min_isr_, injected_bugs_)
             : elect_on_unfence(*current, id, default_min_isr_, injected_bugs_);
  add_change_records(records, updates);
  std::string why;
  if (ErrorCode e = commit(records, &why, wait); e != ErrorCode::none) return e;
  module_logger("metadata")->info("{} broker {} (epoch {}), {} partition(s) changed", fenced ? "fenced" : "unfenced", id,
                                 epoch, updates.size());
  return ErrorCode::none;
}

ProducerIdBlock MetadataStore::allocate_producer_ids(int32_t broker_id, int64_t broker_epoch) {
  if (channel_ && !leads()) {
    auto block = channel_->allocate_producer_ids(broker_id, broker_epoch);
    if (!block) throw std::runtime_error("cannot allocate producer ids: the controller did not answer");
    return *block;
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  ProducerIdBlock block{broker_id, current->next_producer_id, ProducerIdManager::kBlockSize};
  std::string why;
  if (ErrorCode e = commit({producer_ids_record(broker_id, broker_epoch, block.end())}, &why); e != ErrorCode::none)
    throw std::runtime_error("cannot allocate producer ids: " + why);
  module_logger("metadata")->info("allocated producer ids [{}, {}) to node {}", block.first, block.end(), broker_id);
  return block;
}

namespace {

void put_broker(MetadataImage& image, BrokerInfo b) {
  for (auto& existing : image.brokers) {
    if (existing.node_id == b.node_id) {
      existing = std::move(b);
      return;
    }
  }
  image.brokers.push_back(std::move(b));
  std::sort(image.brokers.begin(), image.brokers.end(),
            [](const BrokerInfo& x, const BrokerInfo& y) { return x.node_id < y.node_id; });
}

void set_fenced(MetadataImage& image, int32_t id, int64_t epoch, bool fenced) {
  for (auto& b : image.brokers)
    if (b.node_id == id && b.epoch == epoch) b.fenced = fenced;
}

}  // namespace

void replay(const protocol::RegisterBrokerRecord& r, MetadataImage& image) {
  BrokerInfo b;
  b.node_id = r.broker_id;
  b.incarnation = r.incarnation_id;
  b.epoch = r.broker_epoch;
  if (!r.end_points.empty()) {
    b.listener = r.end_points[0].name;
    b.host = r.end_points[0].host;
    b.port = r.end_points[0].port;
  }
  for (const auto& e : r.end_points) b.endpoints.push_back(BrokerEndpoint{e.name, e.host, e.port, e.security_protocol});
  b.rack = r.rack.value_or("");
  b.fenced = r.fenced;
  put_broker(image, std::move(b));
}

void replay(const protocol::UnregisterBrokerRecord& r, MetadataImage& image) {
  std::erase_if(image.brokers, [&](const BrokerInfo& b) { return b.node_id == r.broker_id && b.epoch == r.broker_epoch; });
}

void replay(const protocol::FenceBrokerRecord& r, MetadataImage& image) {
  set_fenced(image, r.id, r.epoch, true);
}

void replay(const protocol::UnfenceBrokerRecord& r, MetadataImage& image) {
  set_fenced(image, r.id, r.epoch, false);
}

void replay(const protocol::ProducerIdsRecord& r, MetadataImage& image) {
  image.next_producer_id = std::max(image.next_producer_id, r.next_producer_id);
}

}  // namespace brokerd::metadata
