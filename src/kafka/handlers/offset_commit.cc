// OffsetCommit: committed positions are written to the group's __consumer_offsets partition
// on its home shard and acknowledged once appended. Unknown topics are refused per partition;
// v10 names topics by id (KIP-848), and an unknown id is UNKNOWN_TOPIC_ID.
#include <map>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/group/group_coordinator.h"
#include "brokerd/protocol/messages/offset_commit_request.h"
#include "brokerd/protocol/messages/offset_commit_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

using protocol::ErrorCode;
using protocol::OffsetCommitRequest;
using protocol::OffsetCommitResponse;

boost::asio::awaitable<net::Response> handle_offset_commit(HandlerContext& ctx) {
  auto req = ctx.decode<OffsetCommitRequest>();
  auto image = ctx.services.metadata.image();
  group::CommitRequest commit;
  commit.group_id = req.group_id;
  commit.generation = req.generation_id_or_member_epoch;
  commit.member_id = req.member_id;
  commit.instance_id = req.group_instance_id;

  OffsetCommitResponse resp;
  std::vector<std::pair<size_t, size_t>> slots;  // (topic, partition) of each commit entry
  // READ on the group, and READ on each topic.
  const bool group_ok = authorized_group(ctx, acl::Operation::read, req.group_id);
  const bool by_id = ctx.version >= 10;
  for (const auto& t : req.topics) {
    OffsetCommitResponse::OffsetCommitResponseTopic rt;
    rt.name = t.name;
    rt.topic_id = t.topic_id;
    const metadata::TopicMetadata* meta = by_id ? image->topic(t.topic_id) : image->topic(t.name);
    const std::string& name = by_id && meta ? meta->name : t.name;
    const bool topic_ok = group_ok && (by_id && !meta ? true : authorized_topic(ctx, acl::Operation::read, name));
    for (const auto& p : t.partitions) {
      OffsetCommitResponse::OffsetCommitResponsePartition rp;
      rp.partition_index = p.partition_index;
      if (!group_ok) {
        rp.error_code = protocol::code(ErrorCode::group_authorization_failed);
      } else if (!topic_ok) {
        rp.error_code = protocol::code(ErrorCode::topic_authorization_failed);
      } else if (by_id && !meta) {
        rp.error_code = protocol::code(ErrorCode::unknown_topic_id);
      } else if (!meta || p.partition_index < 0 || p.partition_index >= meta->partition_count()) {
        rp.error_code = protocol::code(ErrorCode::unknown_topic_or_partition);
      } else {
        group::OffsetEntry e;
        e.offset = p.committed_offset;
        e.leader_epoch = p.committed_leader_epoch;
        e.metadata = p.committed_metadata.value_or("");
        commit.offsets.emplace_back(group::OffsetKey{name, p.partition_index}, std::move(e));
        slots.emplace_back(resp.topics.size(), rt.partitions.size());
      }
      rt.partitions.push_back(std::move(rp));
    }
    resp.topics.push_back(std::move(rt));
  }
  if (!commit.offsets.empty()) {
    auto errors = co_await ctx.services.groups.commit(std::move(commit));
    for (size_t i = 0; i < errors.size(); ++i)
      resp.topics[slots[i].first].partitions[slots[i].second].error_code = protocol::code(errors[i]);
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
