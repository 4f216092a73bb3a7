#include "brokerd/metadata/reassignment_requests.h"

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/metadata/partition_reassignment.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

protocol::AlterPartitionReassignmentsResponse answer_alter_partition_reassignments(
    MetadataStore& store, const protocol::AlterPartitionReassignmentsRequest& req, int16_t version) {
  std::vector<MetadataStore::ReassignmentTarget> targets;
  for (const auto& t : req.topics)
    for (const auto& p : t.partitions) targets.push_back({t.name, p.partition_index, p.replicas});
  const bool allow_rf_change = version >= 1 ? req.allow_replication_factor_change : true;
  auto answer = store.reassign_partitions(targets, allow_rf_change);
  protocol::AlterPartitionReassignmentsResponse resp;
  resp.allow_replication_factor_change = allow_rf_change;
  resp.error_code = protocol::code(answer.error);
  resp.error_message = answer.error == ErrorCode::none ? std::nullopt : std::optional<std::string>(answer.message);
  size_t i = 0;
  for (const auto& t : req.topics) {
    auto& tr = resp.responses.emplace_back();
    tr.name = t.name;
    for (const auto& p : t.partitions) {
      auto& pr = tr.partitions.emplace_back();
      pr.partition_index = p.partition_index;
      // A request refused as a whole (not the controller) says so for each partition too.
      const auto& [error, message] =
          answer.error != ErrorCode::none ? std::pair{answer.error, answer.message} : answer.results[i];
      pr.error_code = protocol::code(error);
      pr.error_message = error == ErrorCode::none ? std::nullopt : std::optional<std::string>(message);
      ++i;
    }
  }
  return resp;
}

protocol::ListPartitionReassignmentsResponse answer_list_partition_reassignments(
    const MetadataStore& store, const protocol::ListPartitionReassignmentsRequest& req) {
  const auto snapshot = store.image();
  const MetadataImage& image = *snapshot;
  protocol::ListPartitionReassignmentsResponse resp;
  resp.error_message = std::nullopt;  // null on success, as the schema says
  auto add = [&resp](const TopicMetadata& t, int32_t p) {
    const PartitionAssignment* a = t.partition(p);
    if (!a || !a->reassigning()) return;
    if (resp.topics.empty() || resp.topics.back().name != t.name) resp.topics.emplace_back().name = t.name;
    auto& pr = resp.topics.back().partitions.emplace_back();
    pr.partition_index = p;
    pr.replicas = a->replicas;
    pr.adding_replicas = a->adding;
    pr.removing_replicas = a->removing;
  };
  if (!req.topics) {
    image.for_each_topic([&](const TopicPtr& t) {
      for (int32_t p = 0; p < t->partition_count(); ++p) add(*t, p);
    });
    return resp;
  }
  // Named partitions that do not exist, or are not being reassigned, are left out (as Kafka
  // does).
  for (const auto& t : *req.topics)
    if (const TopicMetadata* meta = image.topic(t.name))
      for (int32_t p : t.partition_indexes) add(*meta, p);
  return resp;
}

}  // namespace brokerd::metadata
