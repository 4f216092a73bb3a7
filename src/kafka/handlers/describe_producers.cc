// DescribeProducers: the idempotent and transactional producers each partition tracks (for
// operators), read on the partition's home shard: the coordinator epoch of each one's last
// marker (-1 before any) and the first offset of its ongoing transaction (-1 when none).
#include <algorithm>
#include <chrono>

#include "brokerd/common/clock.h"
#include "brokerd/partitions/fan_out.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/protocol/messages/describe_producers_request.h"
#include "brokerd/protocol/messages/describe_producers_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::DescribeProducersRequest;
using protocol::DescribeProducersResponse;
using protocol::ErrorCode;

struct Listing {
  ErrorCode error = ErrorCode::none;
  std::vector<DescribeProducersResponse::ProducerState> producers;
};

Listing list(partitions::Partition* p, int64_t expiration_ms, int64_t check_interval_ms) {
  Listing l;
  if (!p) {
    l.error = ErrorCode::not_leader_or_follower;
    return l;
  }
  p->expire_producers(wall_clock_ms(), expiration_ms, check_interval_ms);
  for (const auto& [pid, e] : p->log().producer_state().producers()) {
    DescribeProducersResponse::ProducerState s;
    s.producer_id = pid;
    s.producer_epoch = e.epoch;
    s.last_sequence = e.last_seq();
    s.last_timestamp = e.last_timestamp;
    s.coordinator_epoch = e.coordinator_epoch;
    s.current_txn_start_offset = e.current_txn_first_offset;
    l.producers.push_back(s);
  }
  std::sort(l.producers.begin(), l.producers.end(),
            [](const auto& a, const auto& b) { return a.producer_id < b.producer_id; });
  return l;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_describe_producers(HandlerContext& ctx) {
  auto req = ctx.decode<DescribeProducersRequest>();
  auto& svc = ctx.services;
  auto image = svc.metadata.image();
  const int64_t expiration_ms = svc.config.integer("producer.id.expiration.ms");
  const int64_t check_interval_ms = svc.config.integer("producer.id.expiration.check.interval.ms");

  DescribeProducersResponse resp;
  std::vector<std::pair<size_t, size_t>> slots;  // (topic, partition) index in resp
  std::vector<partitions::FanOutTask<Listing>> tasks;
  for (const auto& topic : req.topics) {
    const metadata::TopicMetadata* meta = image->topic(topic.name);
    const bool allowed = authorized_topic(ctx, acl::Operation::read, topic.name);
    DescribeProducersResponse::TopicResponse tr;
    tr.name = topic.name;
    for (int32_t index : topic.partition_indexes) {
      DescribeProducersResponse::PartitionResponse pr;
      pr.partition_index = index;
      if (!allowed) {
        pr.error_code = protocol::code(ErrorCode::topic_authorization_failed);
      } else if (!meta || index < 0 || index >= meta->partition_count()) {
        pr.error_code = protocol::code(ErrorCode::unknown_topic_or_partition);
      } else {
        partitions::TopicPartition tp{topic.name, index};
        slots.emplace_back(resp.topics.size(), tr.partitions.size());
        tasks.push_back({svc.partitions.executor_of(tp), [pm = &svc.partitions, tp, expiration_ms, check_interval_ms] {
                           auto* p = pm->leading(tp);
                           return p ? list(p, expiration_ms, check_interval_ms) : Listing{pm->not_served(tp), {}};
                         }});
      }
      tr.partitions.push_back(std::move(pr));
    }
    resp.topics.push_back(std::move(tr));
  }
  auto listings = co_await partitions::fan_out(std::move(tasks));
  for (size_t i = 0; i < listings.size(); ++i) {
    auto& pr = resp.topics[slots[i].first].partitions[slots[i].second];
    pr.error_code = protocol::code(listings[i].error);
    pr.active_producers = std::move(listings[i].producers);
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
