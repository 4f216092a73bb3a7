// ListOffsets: earliest, latest, max-timestamp, or the first offset at or after a timestamp
// (through the time index), per partition on its home shard. Only offsets a consumer may
// fetch are answered: below the high watermark, or with isolation_level 1 (read_committed)
// below the last stable offset, which is then also what LATEST means.
#include "brokerd/partitions/fan_out.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/protocol/messages/list_offsets_request.h"
#include "brokerd/protocol/messages/list_offsets_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;

constexpr int64_t kLatest = -1, kEarliest = -2, kMaxTimestamp = -3, kEarliestLocal = -4, kLatestTiered = -5,
                  kEarliestPendingUpload = -6;

struct Answer {
  ErrorCode error = ErrorCode::none;
  int64_t timestamp = -1;
  int64_t offset = -1;
  int32_t leader_epoch = -1;
};

Answer lookup(partitions::Partition* p, int64_t ts, bool read_committed) {
  Answer a;
  if (!p) {
    a.error = ErrorCode::not_leader_or_follower;
    return a;
  }
  const auto& log = p->log();
  a.leader_epoch = p->leader_epoch();
  const int64_t fetchable = read_committed ? p->last_stable_offset() : p->high_watermark();
  switch (ts) {
    case kLatest:
      a.offset = fetchable;
      break;
    case kEarliest:
    case kEarliestLocal:
      a.offset = log.log_start_offset();
      break;
    case kLatestTiered:
    case kEarliestPendingUpload:
      // Nothing is tiered, nothing waits to be: no offset (as Kafka answers without remote
      // storage).
      a.leader_epoch = -1;
      break;
    case kMaxTimestamp:
      // As for a timestamp: only a record below the high watermark is answered, so an
      // uncommitted record with the largest timestamp gives no offset (as Kafka answers).
      if (auto m = log.max_timestamp_and_offset(); m && m->offset < fetchable) {
        a.timestamp = m->timestamp;
        a.offset = m->offset;
      } else {
        a.leader_epoch = -1;
      }
      break;
    default:
      if (ts < 0) {
        a.error = ErrorCode::invalid_request;
      } else if (auto m = log.offset_for_timestamp(ts); m && m->offset < fetchable) {
        a.timestamp = m->timestamp;
        a.offset = m->offset;
      } else {
        a.leader_epoch = -1;
      }
  }
  return a;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_list_offsets(HandlerContext& ctx) {
  auto req = ctx.decode<ListOffsetsRequest>();
  auto& svc = ctx.services;
  auto image = svc.metadata.image();
  const bool read_committed = ctx.version >= 2 && req.isolation_level == 1;

  ListOffsetsResponse resp;
  std::vector<std::pair<size_t, size_t>> slots;  // (topic, partition) index in resp
  std::vector<partitions::FanOutTask<Answer>> tasks;
  for (const auto& topic : req.topics) {
    const metadata::TopicMetadata* meta = image->topic(topic.name);
    const bool allowed = authorized_topic(ctx, acl::Operation::describe, topic.name);
    ListOffsetsResponse::ListOffsetsTopicResponse tr;
    tr.name = topic.name;
    for (const auto& part : topic.partitions) {
      ListOffsetsResponse::ListOffsetsPartitionResponse pr;
      pr.partition_index = part.partition_index;
      if (!allowed) {
        pr.error_code = protocol::code(ErrorCode::topic_authorization_failed);
      } else if (!meta || part.partition_index < 0 || part.partition_index >= meta->partition_count()) {
        pr.error_code = protocol::code(ErrorCode::unknown_topic_or_partition);
      } else {
        partitions::TopicPartition tp{topic.name, part.partition_index};
        slots.emplace_back(resp.topics.size(), tr.partitions.size());
        tasks.push_back({svc.partitions.executor_of(tp),
                         [pm = &svc.partitions, tp, ts = part.timestamp, read_committed] {
                           auto* p = pm->leading(tp);
                           return p ? lookup(p, ts, read_committed) : Answer{pm->not_served(tp)};
                         }});
      }
      tr.partitions.push_back(std::move(pr));
    }
    resp.topics.push_back(std::move(tr));
  }
  auto answers = co_await partitions::fan_out(std::move(tasks));
  for (size_t i = 0; i < answers.size(); ++i) {
    auto& pr = resp.topics[slots[i].first].partitions[slots[i].second];
    pr.error_code = protocol::code(answers[i].error);
    pr.timestamp = answers[i].timestamp;
    pr.offset = answers[i].offset;
    if (ctx.version >= 4) pr.leader_epoch = answers[i].leader_epoch;
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
