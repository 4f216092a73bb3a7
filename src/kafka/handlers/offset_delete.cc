// OffsetDelete: removes committed offsets of a group (tombstones), except for topics a member
// of a live consumer group still subscribes to (GROUP_SUBSCRIBED_TO_TOPIC).
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/offset_delete_request.h"
#include "brokerd/protocol/messages/offset_delete_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

using protocol::ErrorCode;
using protocol::OffsetDeleteResponse;

boost::asio::awaitable<net::Response> handle_offset_delete(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::OffsetDeleteRequest>();
  auto image = ctx.services.metadata.image();
  OffsetDeleteResponse resp;
  // DELETE on the group, READ on each topic.
  if (!authorized_group(ctx, acl::Operation::remove, req.group_id)) {
    resp.error_code = protocol::code(ErrorCode::group_authorization_failed);
    co_return ctx.respond(resp);
  }
  std::vector<group::OffsetKey> keys;
  std::vector<std::pair<size_t, size_t>> slots;
  for (const auto& t : req.topics) {
    OffsetDeleteResponse::OffsetDeleteResponseTopic rt;
    rt.name = t.name;
    const metadata::TopicMetadata* meta = image->topic(t.name);
    const bool topic_ok = authorized_topic(ctx, acl::Operation::read, t.name);
    for (const auto& p : t.partitions) {
      OffsetDeleteResponse::OffsetDeleteResponsePartition rp;
      rp.partition_index = p.partition_index;
      if (!topic_ok) {
        rp.error_code = protocol::code(ErrorCode::topic_authorization_failed);
      } else if (!meta || p.partition_index < 0 || p.partition_index >= meta->partition_count()) {
        rp.error_code = protocol::code(ErrorCode::unknown_topic_or_partition);
      } else {
        keys.push_back({t.name, p.partition_index});
        slots.emplace_back(resp.topics.size(), rt.partitions.size());
      }
      rt.partitions.push_back(std::move(rp));
    }
    resp.topics.push_back(std::move(rt));
  }
  auto [error, errors] = co_await ctx.services.groups.delete_offsets(req.group_id, keys);
  resp.error_code = protocol::code(error);
  if (error != ErrorCode::none) {
    resp.topics.clear();
  } else {
    for (size_t i = 0; i < errors.size(); ++i)
      resp.topics[slots[i].first].partitions[slots[i].second].error_code = protocol::code(errors[i]);
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
