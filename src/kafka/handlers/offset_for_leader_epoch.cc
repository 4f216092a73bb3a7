// OffsetForLeaderEpoch: where a leader epoch ended in this leader's log, so that a returning
// follower (or a client that saw an older leader, KIP-320) knows where its log stops agreeing.
#include "brokerd/partitions/fan_out.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_request.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

boost::asio::awaitable<net::Response> handle_offset_for_leader_epoch(HandlerContext& ctx) {
  using protocol::ErrorCode;
  auto req = ctx.decode<protocol::OffsetForLeaderEpochRequest>();
  auto& pm = ctx.services.partitions;
  const int32_t replica = ctx.version >= 3 ? req.replica_id : -1;
  std::vector<partitions::FanOutTask<protocol::OffsetForLeaderEpochResponse::EpochEndOffset>> tasks;
  // A follower needs CLUSTER_ACTION on the cluster, a consumer DESCRIBE on the topic.
  const bool follower_ok = replica < 0 || authorized_cluster(ctx, acl::Operation::cluster_action);
  for (const auto& t : req.topics) {
    const bool allowed = replica >= 0 ? follower_ok : authorized_topic(ctx, acl::Operation::describe, t.topic);
    for (const auto& part : t.partitions) {
      partitions::TopicPartition tp{t.topic, part.partition};
      tasks.push_back({pm.executor_of(tp), [&pm, tp, part, replica, allowed] {
                         protocol::OffsetForLeaderEpochResponse::EpochEndOffset out;
                         out.partition = part.partition;
                         if (!allowed) {
                           out.error_code = protocol::code(replica >= 0 ? ErrorCode::cluster_authorization_failed
                                                                        : ErrorCode::topic_authorization_failed);
                           return out;
                         }
                         partitions::Partition* p = pm.local(tp);
                         // A consumer asks only the leader; a follower asks whatever this
                         // node thinks of its role (the core refuses unless it leads).
                         if (!p || (replica < 0 && !p->is_leader())) {
                           out.error_code = protocol::code(p                 ? ErrorCode::not_leader_or_follower
                                                           : pm.offline(tp) ? ErrorCode::kafka_storage_error
                                                                            : ErrorCode::unknown_topic_or_partition);
                           return out;
                         }
                         const int32_t current = part.current_leader_epoch >= 0 ? part.current_leader_epoch
                                                                                : p->leader_epoch();
                         auto r = p->replica().handle_epoch_end({replica, current, part.leader_epoch});
                         out.error_code = protocol::code(r.error);
                         out.leader_epoch = r.leader_epoch;
                         out.end_offset = r.end_offset;
                         return out;
                       }});
    }
  }
  auto results = co_await partitions::fan_out(std::move(tasks));
  protocol::OffsetForLeaderEpochResponse resp;
  size_t i = 0;
  bool any_error = false;
  for (const auto& t : req.topics) {
    auto& tr = resp.topics.emplace_back();
    tr.topic = t.topic;
    for (size_t k = 0; k < t.partitions.size(); ++k) {
      any_error = any_error || results[i].error_code != 0;
      tr.partitions.push_back(std::move(results[i++]));
    }
  }
  if (any_error) ctx.services.metrics.api(ctx.request.api_key).errors.add();
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
