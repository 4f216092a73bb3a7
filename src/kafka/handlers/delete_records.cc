// DeleteRecords: moves each partition's log start forward on its leader, then waits (up to
// the request's timeout) until every in-sync replica has moved its own, as followers do on
// their next fetch. Offset -1 means the high watermark; the answer carries the low watermark
// (the smallest log start of the ISR).
#include <chrono>
#include <map>

#include "brokerd/common/clock.h"
#include "brokerd/partitions/fan_out.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/protocol/messages/delete_records_request.h"
#include "brokerd/protocol/messages/delete_records_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/mirror_writes.h"

namespace brokerd::kafka {
namespace {

using protocol::DeleteRecordsRequest;
using protocol::DeleteRecordsResponse;
using protocol::ErrorCode;

constexpr int64_t kHighWatermark = -1;

struct Outcome {
  ErrorCode error = ErrorCode::none;
  int64_t low_watermark = -1;
  int64_t offset = -1;  // the requested offset, resolved
};

Outcome delete_before(partitions::Partition* p, int64_t requested) {
  if (!p) return {ErrorCode::not_leader_or_follower};
  auto& log = p->log();
  // A compacted-only topic keeps its records by key: deleting by offset would defeat it.
  if (!log.config().cleanup_policy.remove) return {ErrorCode::policy_violation};
  int64_t hw = p->high_watermark();
  int64_t offset = requested == kHighWatermark ? hw : requested;
  if (offset < 0 || offset > hw) return {ErrorCode::offset_out_of_range};
  if (auto e = log.delete_records_before(offset, wall_clock_ms()); e != ErrorCode::none) return {e};
  return {ErrorCode::none, log.log_start_offset(), offset};
}

}  // namespace

boost::asio::awaitable<net::Response> handle_delete_records(HandlerContext& ctx) {
  auto req = ctx.decode<DeleteRecordsRequest>();
  auto& svc = ctx.services;
  auto image = svc.metadata.image();

  // One answer per partition: a partition named twice takes its last offset (as Kafka's
  // map of requested offsets does), answered where it first appeared.
  DeleteRecordsResponse resp;
  std::map<std::string, size_t> topic_slot;
  std::map<std::pair<std::string, int32_t>, std::pair<size_t, size_t>> part_slot;
  std::map<std::pair<std::string, int32_t>, int64_t> offsets;
  for (const auto& topic : req.topics) {
    auto [tit, new_topic] = topic_slot.try_emplace(topic.name, resp.topics.size());
    if (new_topic) {
      DeleteRecordsResponse::DeleteRecordsTopicResult tr;
      tr.name = topic.name;
      resp.topics.push_back(std::move(tr));
    }
    auto& tr = resp.topics[tit->second];
    for (const auto& part : topic.partitions) {
      std::pair key{topic.name, part.partition_index};
      offsets[key] = part.offset;
      if (part_slot.try_emplace(key, tit->second, tr.partitions.size()).second) {
        DeleteRecordsResponse::DeleteRecordsPartitionResult pr;
        pr.partition_index = part.partition_index;
        pr.low_watermark = -1;
        tr.partitions.push_back(std::move(pr));
      }
    }
  }

  std::vector<std::pair<size_t, size_t>> slots;
  std::vector<partitions::TopicPartition> tps;
  std::vector<partitions::FanOutTask<Outcome>> tasks;
  for (const auto& [key, slot] : part_slot) {
    auto& pr = resp.topics[slot.first].partitions[slot.second];
    const metadata::TopicMetadata* meta = image->topic(key.first);
    if (!authorized_topic(ctx, acl::Operation::remove, key.first)) {
      pr.error_code = protocol::code(ErrorCode::topic_authorization_failed);
    } else if (!meta || key.second < 0 || key.second >= meta->partition_count()) {
      pr.error_code = protocol::code(ErrorCode::unknown_topic_or_partition);
    } else if (metadata::is_internal_topic(key.first)) {
      pr.error_code = protocol::code(ErrorCode::invalid_topic_exception);
    } else if (auto refusal = refuse_mirror_write(key.first, meta->mirror_link)) {
      pr.error_code = protocol::code(refusal->error);  // DeleteRecords answers carry no message
    } else {
      partitions::TopicPartition tp{key.first, key.second};
      slots.push_back(slot);
      tps.push_back(tp);
      tasks.push_back({svc.partitions.executor_of(tp), [pm = &svc.partitions, tp, offset = offsets[key]] {
                         auto* p = pm->leading(tp);
                         return p ? delete_before(p, offset) : Outcome{pm->not_served(tp)};
                       }});
    }
  }
  auto outcomes = co_await partitions::fan_out(std::move(tasks));
  // The followers' turn: one deadline for the whole request.
  const int64_t deadline = wall_clock_ms() + std::max(req.timeout_ms, 0);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    auto& o = outcomes[i];
    if (o.error != ErrorCode::none) continue;
    auto [error, low] = co_await svc.partitions.await_low_watermark(tps[i], o.offset, deadline - wall_clock_ms());
    o.error = error;
    o.low_watermark = low;
  }
  for (size_t i = 0; i < outcomes.size(); ++i) {
    auto& pr = resp.topics[slots[i].first].partitions[slots[i].second];
    pr.error_code = protocol::code(outcomes[i].error);
    pr.low_watermark = outcomes[i].low_watermark;
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
