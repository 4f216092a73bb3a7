#include "controller/admin_requests.h"

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"

namespace brokerd::controller {
namespace {

using protocol::ErrorCode;

constexpr int8_t kTopicResource = 2, kBrokerResource = 4;

// A controller that no longer leads answers NOT_CONTROLLER (the broker retries with the new
// one) rather than forwarding the change itself.
metadata::TopicChange not_controller() {
  metadata::TopicChange c;
  c.error = ErrorCode::not_controller;
  c.message = "This node does not lead the metadata quorum.";
  return c;
}

std::optional<std::string> message_of(ErrorCode e, const std::string& message) {
  if (e == ErrorCode::none) return std::nullopt;
  return message.empty() ? std::string(protocol::error_name(e)) : message;
}

}  // namespace

protocol::CreateTopicsResponse serve_create_topics(metadata::MetadataStore& store, const protocol::CreateTopicsRequest& req,
                                                  const std::string& owner) {
  protocol::CreateTopicsResponse resp;
  std::vector<metadata::TopicSpec> specs;
  std::vector<size_t> slot;  // response index of each spec
  const bool leads = store.leads();
  for (const auto& t : req.topics) {
    auto& r = resp.topics.emplace_back();
    r.name = t.name;
    r.configs = std::nullopt;
    metadata::TopicSpec spec;
    spec.name = t.name;
    spec.partitions = t.num_partitions;
    spec.replication_factor = t.replication_factor;
    spec.owner = owner;
    for (const auto& c : t.configs)
      if (c.value) spec.configs[c.name] = *c.value;
    spec.assignment.resize(t.assignments.size());
    bool bad_assignment = false;
    for (const auto& a : t.assignments) {
      if (a.partition_index < 0 || static_cast<size_t>(a.partition_index) >= spec.assignment.size()) bad_assignment = true;
      else spec.assignment[static_cast<size_t>(a.partition_index)] = a.broker_ids;
    }
    metadata::TopicChange refused;
    if (!leads) refused = not_controller();
    else if (bad_assignment) refused = {ErrorCode::invalid_replica_assignment, "Partitions should be a consecutive 0-based integer sequence.", nullptr, nullptr};
    if (refused.error != ErrorCode::none) {
      r.error_code = protocol::code(refused.error);
      r.error_message = message_of(refused.error, refused.message);
      continue;
    }
    slot.push_back(resp.topics.size() - 1);
    specs.push_back(std::move(spec));
  }
  auto changes = store.create_topics(std::move(specs), req.validate_only);
  for (size_t k = 0; k < changes.size(); ++k) {
    auto& r = resp.topics[slot[k]];
    const auto& change = changes[k];
    r.error_code = protocol::code(change.error);
    r.error_message = message_of(change.error, change.message);
    if (change.error == ErrorCode::none && change.topic) {
      r.topic_id = change.topic->id;
      r.num_partitions = change.topic->partition_count();
      r.replication_factor = static_cast<int16_t>(change.topic->replication_factor());
    }
  }
  return resp;
}

protocol::DeleteTopicsResponse serve_delete_topics(metadata::MetadataStore& store, const protocol::DeleteTopicsRequest& req) {
  protocol::DeleteTopicsResponse resp;
  std::vector<std::string> names = req.topic_names;
  for (const auto& t : req.topics) {
    if (t.name) {
      names.push_back(*t.name);
    } else if (const auto* by_id = store.image()->topic(t.topic_id)) {
      names.push_back(by_id->name);
    } else {
      auto& r = resp.responses.emplace_back();
      r.name = std::nullopt;
      r.topic_id = t.topic_id;
      r.error_code = protocol::code(ErrorCode::unknown_topic_id);
    }
  }
  for (const auto& name : names) {
    auto change = store.leads() ? store.delete_topic(name) : not_controller();
    auto& r = resp.responses.emplace_back();
    r.name = name;
    if (change.topic) r.topic_id = change.topic->id;
    r.error_code = protocol::code(change.error);
    r.error_message = message_of(change.error, change.message);
  }
  return resp;
}

protocol::CreatePartitionsResponse serve_create_partitions(metadata::MetadataStore& store,
                                                           const protocol::CreatePartitionsRequest& req) {
  protocol::CreatePartitionsResponse resp;
  for (const auto& t : req.topics) {
    std::vector<std::vector<int32_t>> assignment;
    if (t.assignments)
      for (const auto& a : *t.assignments) assignment.push_back(a.broker_ids);
    auto change = store.leads() ? store.create_partitions(t.name, t.count, req.validate_only, std::move(assignment))
                                : not_controller();
    auto& r = resp.results.emplace_back();
    r.name = t.name;
    r.error_code = protocol::code(change.error);
    r.error_message = message_of(change.error, change.message);
  }
  return resp;
}

protocol::AlterConfigsResponse serve_alter_configs(metadata::MetadataStore& store, const protocol::AlterConfigsRequest& req) {
  protocol::AlterConfigsResponse resp;
  for (const auto& res : req.resources) {
    auto& r = resp.responses.emplace_back();
    r.resource_type = res.resource_type;
    r.resource_name = res.resource_name;
    if (res.resource_type != kTopicResource && res.resource_type != kBrokerResource) {
      r.error_code = protocol::code(ErrorCode::invalid_request);
      r.error_message = "The controller changes topic and broker configs only.";
      continue;
    }
    std::map<std::string, std::string> configs;
    for (const auto& c : res.configs)
      if (c.value) configs[c.name] = *c.value;
    auto change = !store.leads() ? not_controller()
                  : res.resource_type == kTopicResource
                      ? store.set_topic_configs(res.resource_name, configs, req.validate_only)
                      : store.set_broker_configs(res.resource_name, configs, req.validate_only);
    r.error_code = protocol::code(change.error);
    r.error_message = message_of(change.error, change.message);
  }
  return resp;
}

protocol::AllocateProducerIdsResponse serve_allocate_producer_ids(metadata::MetadataStore& store,
                                                                  const protocol::AllocateProducerIdsRequest& req) {
  protocol::AllocateProducerIdsResponse resp;
  if (!store.leads()) {
    resp.error_code = protocol::code(ErrorCode::not_controller);
    return resp;
  }
  try {
    auto block = store.allocate_producer_ids(req.broker_id, req.broker_epoch);
    resp.producer_id_start = block.first;
    resp.producer_id_len = block.size;
  } catch (const std::exception& e) {
    module_logger("quorum")->warn("allocating producer ids for broker {} failed: {}", req.broker_id, e.what());
    resp.error_code = protocol::code(ErrorCode::not_controller);
  }
  return resp;
}

protocol::AlterPartitionResponse serve_alter_partition(metadata::MetadataStore& store,
                                                       const protocol::AlterPartitionRequest& req, int16_t version) {
  protocol::AlterPartitionResponse resp;
  if (!store.leads()) {
    resp.error_code = protocol::code(ErrorCode::not_controller);
    return resp;
  }
  // Every partition of the request in one change of the metadata log.
  std::vector<metadata::AlterPartitionItem> items;
  for (const auto& t : req.topics) {
    for (const auto& p : t.partitions) {
      auto& item = items.emplace_back();
      item.topic_id = t.topic_id;
      item.partition = p.partition_index;
      auto& r = item.request;
      r.leader = req.broker_id;
      r.leader_epoch = p.leader_epoch;
      r.partition_epoch = p.partition_epoch;
      if (version >= 3) {
        for (const auto& b : p.new_isr_with_epochs) {
          r.new_isr.push_back(b.broker_id);
          r.broker_epochs.push_back(b.broker_epoch);
        }
      } else {
        r.new_isr = p.new_isr;
      }
    }
  }
  const auto answers = store.alter_partitions(items);
  size_t next = 0;
  for (const auto& t : req.topics) {
    auto& tr = resp.topics.emplace_back();
    tr.topic_id = t.topic_id;
    for (const auto& p : t.partitions) {
      const auto& answer = answers[next++];
      auto& pr = tr.partitions.emplace_back();
      pr.partition_index = p.partition_index;
      pr.error_code = protocol::code(answer.error);
      pr.leader_id = answer.assignment.leader;
      pr.leader_epoch = answer.assignment.leader_epoch;
      pr.isr = answer.assignment.isr;
      pr.partition_epoch = answer.assignment.partition_epoch;
    }
  }
  return resp;
}

}  // namespace brokerd::controller
