// DescribeTopicPartitions (KIP-966): topics in name order with their partitions' leaders,
// replicas, ISR and eligible leader replicas, at most ResponsePartitionLimit partitions per
// response, and a cursor where the next request should go on.
#include <algorithm>
#include <set>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/protocol/messages/describe_topic_partitions_request.h"
#include "brokerd/protocol/messages/describe_topic_partitions_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::DescribeTopicPartitionsRequest;
using protocol::DescribeTopicPartitionsResponse;
using protocol::ErrorCode;

// The most partitions one response holds, whatever the request asks (Kafka's
// max.request.partition.size.limit default).
constexpr int32_t kMaxPartitionsPerResponse = 2000;

DescribeTopicPartitionsResponse::DescribeTopicPartitionsResponsePartition describe_partition(
    const metadata::PartitionAssignment& a, int32_t index, const metadata::MetadataImage& image, int32_t withheld) {
  DescribeTopicPartitionsResponse::DescribeTopicPartitionsResponsePartition out;
  out.partition_index = index;
  out.leader_id = a.leader == withheld ? -1 : a.leader;  // as Metadata answers (withheld_leader)
  out.leader_epoch = a.leader_epoch;
  out.replica_nodes = a.replicas;
  out.isr_nodes = a.isr;
  out.eligible_leader_replicas = a.elr;
  out.last_known_elr = std::vector<int32_t>{};
  out.offline_replicas = image.offline_replicas(a);
  return out;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_describe_topic_partitions(HandlerContext& ctx) {
  auto req = ctx.decode<DescribeTopicPartitionsRequest>();
  auto image = ctx.services.metadata.image();
  const int32_t withheld = withheld_leader(ctx.services);

  // The topics asked for (every topic when none are named), in name order.
  std::set<std::string> names;
  if (req.topics.empty()) {
    // Every topic the principal may DESCRIBE.
    image->for_each_topic([&](const metadata::TopicPtr& t) {
      if (may_see(ctx, acl::ResourceType::topic, t->name)) names.insert(t->name);
    });
  } else {
    for (const auto& t : req.topics) names.insert(t.name);
  }
  int32_t budget = req.response_partition_limit > 0 ? std::min(req.response_partition_limit, kMaxPartitionsPerResponse)
                                                    : kMaxPartitionsPerResponse;
  auto it = names.begin();
  int32_t first_partition = 0;
  if (req.cursor) {
    it = names.lower_bound(req.cursor->topic_name);
    if (it != names.end() && *it == req.cursor->topic_name) first_partition = std::max(req.cursor->partition_index, 0);
  }

  DescribeTopicPartitionsResponse resp;
  for (; it != names.end(); ++it, first_partition = 0) {
    const metadata::TopicMetadata* t = image->topic(*it);
    DescribeTopicPartitionsResponse::DescribeTopicPartitionsResponseTopic out;
    out.name = *it;
    if (!req.topics.empty() && !authorized_topic(ctx, acl::Operation::describe, *it)) {
      out.error_code = protocol::code(ErrorCode::topic_authorization_failed);
      resp.topics.push_back(std::move(out));
      continue;
    }
    if (!t) {
      out.error_code = protocol::code(ErrorCode::unknown_topic_or_partition);
      resp.topics.push_back(std::move(out));
      continue;
    }
    if (budget == 0) {  // full: the next request starts at this topic
      DescribeTopicPartitionsResponse::Cursor next;
      next.topic_name = *it;
      next.partition_index = first_partition;
      resp.next_cursor = std::move(next);
      break;
    }
    out.topic_id = t->id;
    out.is_internal = t->internal;
    out.topic_authorized_operations = authorized_operations(ctx, acl::ResourceType::topic, t->name);
    int32_t p = first_partition;
    for (; p < t->partition_count() && budget > 0; ++p, --budget)
      out.partitions.push_back(describe_partition(*t->partition(p), p, *image, withheld));
    resp.topics.push_back(std::move(out));
    if (p < t->partition_count()) {  // cut inside this topic
      DescribeTopicPartitionsResponse::Cursor next;
      next.topic_name = *it;
      next.partition_index = p;
      resp.next_cursor = std::move(next);
      break;
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
