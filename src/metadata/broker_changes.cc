// The replay of broker registrations (registered, fenced, unfenced, unregistered) and of the
// producer id blocks handed out.
#include <algorithm>

#include "metadata/record_replay.h"

namespace brokerd::metadata {
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
