// CreatePartitions: raises a topic's partition count, placing the new partitions' replicas as
// topic creation does unless the request assigns them (live brokers, each once per
// partition, as many as the topic's replication factor). The answer goes once the new
// partitions this node hosts exist.
#include <fmt/format.h>

#include <map>
#include <set>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/create_partitions_request.h"
#include "brokerd/protocol/messages/create_partitions_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/mirror_writes.h"
#include "kafka/quotas.h"

namespace brokerd::kafka {
namespace {

using protocol::CreatePartitionsRequest;
using protocol::CreatePartitionsResponse;
using protocol::ErrorCode;

struct Check {
  ErrorCode error = ErrorCode::none;
  std::string message;
};

Check check(const CreatePartitionsRequest::CreatePartitionsTopic& req, const metadata::MetadataImage& image) {
  const metadata::TopicMetadata* t = image.topic(req.name);
  if (!t) return {ErrorCode::unknown_topic_or_partition, fmt::format("The topic '{}' does not exist.", req.name)};
  if (auto refusal = refuse_mirror_write(req.name, t->mirror_link)) return {refusal->error, refusal->message};
  if (req.count == t->partition_count())
    return {ErrorCode::invalid_partitions, fmt::format("Topic already has {} partition(s).", t->partition_count())};
  if (req.count < t->partition_count())
    return {ErrorCode::invalid_partitions,
            fmt::format("The topic {} currently has {} partition(s); {} would not be an increase.", req.name,
                        t->partition_count(), req.count)};
  if (!req.assignments) return {};
  int32_t added = req.count - t->partition_count();
  if (static_cast<int32_t>(req.assignments->size()) != added)
    return {ErrorCode::invalid_replica_assignment,
            fmt::format("Attempted to add {} additional partition(s), but only {} assignment(s) were specified.", added,
                        req.assignments->size())};
  for (const auto& a : *req.assignments) {
    if (static_cast<int32_t>(a.broker_ids.size()) != t->replication_factor())
      return {ErrorCode::invalid_replica_assignment,
              fmt::format("The manual partition assignment includes a partition with {} replica(s), but this is not "
                          "consistent with previous partitions, which have {} replica(s).",
                          a.broker_ids.size(), t->replication_factor())};
    std::set<int32_t> seen;
    for (int32_t b : a.broker_ids) {
      if (!seen.insert(b).second)
        return {ErrorCode::invalid_replica_assignment,
                fmt::format("The manual partition assignment includes the broker {} more than once.", b)};
    }
  }
  return {};
}

}  // namespace

boost::asio::awaitable<net::Response> handle_create_partitions(HandlerContext& ctx) {
  auto req = ctx.decode<CreatePartitionsRequest>();
  auto& svc = ctx.services;
  auto image = svc.metadata.image();

  std::map<std::string, int> count;
  for (const auto& t : req.topics) ++count[t.name];

  // A name given twice is refused, once, in place of all its entries (as Kafka does).
  std::vector<std::pair<const CreatePartitionsRequest::CreatePartitionsTopic*, Check>> slots;
  std::set<std::string> answered;
  for (const auto& t : req.topics) {
    if (!answered.insert(t.name).second) continue;
    Check c = count[t.name] > 1 ? Check{ErrorCode::invalid_request, "Duplicate topic name."}
              : !authorized_topic(ctx, acl::Operation::alter, t.name)
                  ? Check{ErrorCode::topic_authorization_failed, "Not authorized to add partitions to this topic."}
                  : check(t, *image);
    slots.emplace_back(&t, std::move(c));
  }

  // controller_mutation_rate (KIP-599): the partitions each topic gains; from v3 a client in
  // debt has the rest refused.
  int64_t throttle_ms = 0;
  for (auto& [t, c] : slots) {
    if (c.error != ErrorCode::none || req.validate_only) continue;
    const auto* topic = image->topic(t->name);
    const int32_t added = topic ? t->count - topic->partition_count() : 0;
    if (!take_mutations(ctx, added, ctx.version >= 3, throttle_ms))
      c = {ErrorCode::throttling_quota_exceeded, "The throttling quota has been exceeded."};
  }
  mute(ctx, throttle_ms);

  bool validate_only = req.validate_only;
  auto newest = co_await svc.blocking.run([&] {
    std::shared_ptr<const metadata::MetadataImage> last;
    for (auto& [t, c] : slots) {
      if (c.error != ErrorCode::none) continue;
      std::vector<std::vector<int32_t>> assignment;
      if (t->assignments)
        for (const auto& a : *t->assignments) assignment.push_back(a.broker_ids);
      auto change = svc.metadata.create_partitions(t->name, t->count, validate_only, std::move(assignment));
      c = {change.error, change.message};
      if (change.image) last = change.image;
    }
    return last;
  });
  if (newest) co_await svc.partitions.reconcile(newest);

  CreatePartitionsResponse resp;
  for (const auto& [t, c] : slots) {
    CreatePartitionsResponse::CreatePartitionsTopicResult r;
    r.name = t->name;
    r.error_code = protocol::code(c.error);
    if (c.error != ErrorCode::none) r.error_message = c.message;
    resp.results.push_back(std::move(r));
  }
  resp.throttle_time_ms = static_cast<int32_t>(throttle_ms);
  co_await answer_later(ctx, throttle_ms, 1);
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
