// The controller's changes of topics (created, deleted, given partitions, reconfigured) and of
// dynamic broker configs, and the replay of their records: topics, their partitions, their
// configs and owner, and the dynamic broker configs that ConfigRecord also carries.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>

#include "brokerd/common/logger.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/metadata/placement.h"

#include "brokerd/config/dynamic_configs.h"
#include "metadata/metadata_records.h"
#include "metadata/record_replay.h"

namespace brokerd::metadata {
namespace {

using protocol::ErrorCode;

TopicChange failure(ErrorCode e, std::string message) {
  TopicChange c;
  c.error = e;
  c.message = std::move(message);
  return c;
}

// Appends the ConfigRecords (made by `record(key, value)`, a null value removing the key) that
// turn the set `before` into `after`.
template <typename Record>
void add_config_changes(std::vector<Bytes>& records, const std::map<std::string, std::string>& before,
                        const std::map<std::string, std::string>& after, Record record) {
  for (const auto& [k, v] : before)
    if (!after.contains(k)) records.push_back(record(k, std::nullopt));
  for (const auto& [k, v] : after) {
    auto old = before.find(k);
    if (old == before.end() || old->second != v) records.push_back(record(k, v));
  }
}

constexpr int32_t kMaxPartitions = 100000;
// Records in one change of the metadata log (one entry): large CreateTopics requests are
// committed in several.
constexpr size_t kMaxRecordsPerChange = 5000;

}  // namespace

// The answer to a committed change: the topic as the image now holds it (or as proposed,
// should a later change have removed it already).
TopicChange MetadataStore::applied(const std::string& name, std::shared_ptr<const TopicMetadata> proposed) const {
  auto after = image();
  auto now = after->topic_ptr(name);
  return TopicChange{ErrorCode::none, {}, now ? now : std::move(proposed), after};
}

namespace {

// A manual assignment may name only live brokers, each once per partition.
std::string check_assignment(const std::vector<std::vector<int32_t>>& assignment, const MetadataImage& image) {
  for (size_t p = 0; p < assignment.size(); ++p) {
    const auto& replicas = assignment[p];
    if (replicas.empty())
      return fmt::format("The manual partition assignment specifies an empty replica list for partition {}.", p);
    for (size_t i = 0; i < replicas.size(); ++i) {
      if (std::find(replicas.begin(), replicas.begin() + static_cast<long>(i), replicas[i]) != replicas.begin() + static_cast<long>(i))
        return fmt::format("The manual partition assignment includes the broker {} more than once.", replicas[i]);
      if (!image.live(replicas[i]))
        return fmt::format("The manual partition assignment includes broker {}, but no such broker is registered.",
                           replicas[i]);
    }
  }
  return {};
}

// A new partition: the first replica leads; every replica is in sync (all logs are empty).
PartitionAssignment fresh_partition(std::vector<int32_t> replicas) {
  PartitionAssignment a;
  a.isr = replicas;
  a.leader = replicas.front();
  a.replicas = std::move(replicas);
  return a;
}

}  // namespace

TopicChange MetadataStore::create_topic(const std::string& name, int32_t partitions, int32_t replication_factor,
                                        const std::map<std::string, std::string>& configs, bool validate_only,
                                        std::vector<std::vector<int32_t>> assignment, std::string owner) {
  TopicSpec spec;
  spec.owner = std::move(owner);
  spec.name = name;
  spec.partitions = partitions;
  spec.replication_factor = replication_factor;
  spec.configs = configs;
  spec.assignment = std::move(assignment);
  std::vector<TopicSpec> one{std::move(spec)};
  return std::move(create_topics(std::move(one), validate_only).front());
}

// The checks that need no lock: name, counts, assignment, configs (normalised in place).
TopicChange MetadataStore::check_topic(TopicSpec& spec, const MetadataImage& current) const {
  if (!valid_topic_name(spec.name))
    return failure(ErrorCode::invalid_topic_exception,
                   fmt::format("Topic name '{}' is illegal: use 1-249 of [a-zA-Z0-9._-], not '.' or '..'", spec.name));
  if (!spec.assignment.empty()) spec.partitions = static_cast<int32_t>(spec.assignment.size());
  if (spec.partitions < 1 || spec.partitions > kMaxPartitions)
    return failure(ErrorCode::invalid_partitions, fmt::format("Number of partitions must be between 1 and {}.", kMaxPartitions));
  if (spec.assignment.empty()) {
    if (spec.replication_factor < 1)
      return failure(ErrorCode::invalid_replication_factor, "Replication factor must be larger than 0.");
    if (spec.replication_factor > current.live_brokers())
      return failure(ErrorCode::invalid_replication_factor,
                     fmt::format("Replication factor: {} larger than available brokers: {}.", spec.replication_factor,
                                 current.live_brokers()));
  } else if (auto why = check_assignment(spec.assignment, current); !why.empty()) {
    return failure(ErrorCode::invalid_replica_assignment, why);
  }
  if (auto [err, msg] = validate_topic_configs(spec.configs); err != ErrorCode::none) return failure(err, msg);
  return {};
}

std::vector<TopicChange> MetadataStore::create_topics(std::vector<TopicSpec> specs, bool validate_only) {
  std::vector<TopicChange> out(specs.size());
  std::vector<size_t> valid;
  {
    auto current = image();
    for (size_t i = 0; i < specs.size(); ++i) {
      out[i] = check_topic(specs[i], *current);
      if (out[i].error == ErrorCode::none) valid.push_back(i);
    }
  }
  if (valid.empty()) return out;
  if (!validate_only && !leads()) {
    const bool mirrors = std::any_of(valid.begin(), valid.end(), [&](size_t i) { return !specs[i].mirror_link.empty(); });
    if (mirrors) {
      for (size_t i : valid) out[i] = failure(ErrorCode::not_controller, "This node is not the active controller.");
      return out;
    }
    forward_create_topics(specs, valid, out);
    return out;
  }

  // Validation only needs the live brokers, which any node's image knows closely enough; a
  // write is judged by the controller's own image. Topics go to the quorum in changes of at
  // most kMaxRecordsPerChange records (a topic's records always in one change).
  std::lock_guard lock(write_mutex_);
  auto current = image();
  std::set<std::string> taken;
  std::vector<Bytes> records;
  std::vector<std::pair<size_t, TopicPtr>> pending;
  auto flush = [&] {
    if (pending.empty()) return;
    std::string why;
    const ErrorCode e = commit(records, &why);
    for (auto& [i, topic] : pending) {
      out[i] = e == ErrorCode::none ? applied(specs[i].name, topic) : failure(e, why);
      if (e == ErrorCode::none)
        module_logger("metadata")->info("created topic {} ({} partitions, replication factor {}, id {})", topic->name,
                                       topic->partition_count(), topic->replication_factor(), topic->id.to_string());
    }
    records.clear();
    pending.clear();
  };
  // Tenant limits count the topics this call accepted before as well as the image's.
  std::vector<std::pair<std::string, int32_t>> accepted;  // owner, partitions
  auto usage = [&](const tenant::Pattern& pattern) {
    tenant::Usage u = current->tenant_usage(pattern);
    for (const auto& [owner, partitions] : accepted) {
      if (!tenant::matches(pattern, owner)) continue;
      ++u.topics;
      u.partitions += partitions;
    }
    return u;
  };
  for (size_t i : valid) {
    TopicSpec& spec = specs[i];
    if (current->topic(spec.name) || !taken.insert(spec.name).second) {
      out[i] = failure(ErrorCode::topic_already_exists, fmt::format("Topic '{}' already exists.", spec.name));
      continue;
    }
    if (!spec.owner.empty()) {
      if (auto why = tenant::exceeded(*current->tenant_limits, spec.owner, 1, spec.partitions, usage)) {
        out[i] = failure(ErrorCode::policy_violation, *why);
        continue;
      }
      accepted.emplace_back(spec.owner, spec.partitions);
    }
    if (spec.assignment.empty()) {
      spec.assignment = place_replicas(placement_brokers(*current), spec.partitions, spec.replication_factor, placement_cursor_);
      if (!validate_only) placement_cursor_ += static_cast<uint32_t>(spec.partitions);
    }
    auto topic = std::make_shared<TopicMetadata>();
    topic->name = spec.name;
    topic->id = protocol::Uuid::random();
    for (auto& replicas : spec.assignment) topic->partitions.push_back(fresh_partition(std::move(replicas)));
    topic->configs = std::move(spec.configs);
    topic->internal = is_internal_topic(spec.name);
    topic->mirror_link = spec.mirror_link;
    topic->source_topic_id = spec.source_topic_id;
    topic->owner = spec.owner;
    if (validate_only) {
      out[i] = TopicChange{ErrorCode::none, {}, topic, nullptr};
      continue;
    }
    const size_t count = 3 + topic->partitions.size() + topic->configs.size();
    if (!records.empty() && records.size() + count > kMaxRecordsPerChange) flush();
    records.push_back(topic_record(*topic));
    for (int32_t p = 0; p < topic->partition_count(); ++p)
      records.push_back(partition_record(topic->id, p, topic->partitions[static_cast<size_t>(p)]));
    for (const auto& [k, v] : topic->configs) records.push_back(config_record(topic->name, k, v));
    if (!topic->mirror_link.empty()) records.push_back(mirror_topic_record(*topic));
    if (!topic->owner.empty()) records.push_back(topic_owner_record(*topic));
    pending.emplace_back(i, topic);
  }
  flush();
  return out;
}

// A node that does not lead sends the valid topics to the controller in one request, and
// answers once its own image has them.
void MetadataStore::forward_create_topics(const std::vector<TopicSpec>& specs, const std::vector<size_t>& valid,
                                          std::vector<TopicChange>& out) {
  if (!channel_) {
    for (size_t i : valid) out[i] = failure(ErrorCode::not_controller, "This node does not lead the metadata quorum.");
    return;
  }
  std::vector<TopicSpec> sent;
  for (size_t i : valid) sent.push_back(specs[i]);
  // The channel answers once this node's image holds what the controller committed.
  auto answers = channel_->create_topics(sent);
  for (size_t k = 0; k < sent.size(); ++k) {
    const size_t i = valid[k];
    if (answers[k].error != ErrorCode::none) {
      out[i] = failure(answers[k].error, answers[k].message);
      continue;
    }
    auto proposed = std::make_shared<TopicMetadata>();
    proposed->name = sent[k].name;
    proposed->id = answers[k].topic_id;
    proposed->partitions.resize(static_cast<size_t>(sent[k].partitions));
    proposed->configs = sent[k].configs;
    out[i] = applied(sent[k].name, proposed);
  }
}

TopicChange MetadataStore::delete_topic(const std::string& name) {
  if (channel_ && !leads()) {
    auto before = image()->topic_ptr(name);
    auto answer = channel_->delete_topic(name);
    if (answer.error != ErrorCode::none) return failure(answer.error, answer.message);
    return TopicChange{ErrorCode::none, {}, before, image()};
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  const TopicMetadata* t = current->topic(name);
  if (!t) return failure(ErrorCode::unknown_topic_or_partition, "This server does not host this topic.");
  auto removed = current->topic_ptr(name);
  std::string why;
  if (ErrorCode e = commit({remove_topic_record(t->id)}, &why); e != ErrorCode::none) return failure(e, why);
  module_logger("metadata")->info("deleted topic {}", name);
  return TopicChange{ErrorCode::none, {}, removed, image()};
}

TopicChange MetadataStore::create_partitions(const std::string& name, int32_t total, bool validate_only,
                                             std::vector<std::vector<int32_t>> assignment) {
  if (!validate_only && channel_ && !leads()) {
    auto answer = channel_->create_partitions(name, total, assignment);
    if (answer.error != ErrorCode::none) return failure(answer.error, answer.message);
    return applied(name, image()->topic_ptr(name));
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  const TopicMetadata* t = current->topic(name);
  if (!t) return failure(ErrorCode::unknown_topic_or_partition, "This server does not host this topic.");
  if (total <= t->partition_count())
    return failure(ErrorCode::invalid_partitions,
                   fmt::format("Topic currently has {} partitions, which is higher than the requested {}.",
                               t->partition_count(), total));
  if (total > kMaxPartitions)
    return failure(ErrorCode::invalid_partitions, fmt::format("Number of partitions must be at most {}.", kMaxPartitions));
  const int32_t added = total - t->partition_count();
  if (!t->owner.empty()) {
    auto usage = [&](const tenant::Pattern& pattern) { return current->tenant_usage(pattern); };
    if (auto why = tenant::exceeded(*current->tenant_limits, t->owner, 0, added, usage))
      return failure(ErrorCode::policy_violation, *why);
  }
  const int32_t rf = t->replication_factor();
  if (!assignment.empty()) {
    if (auto why = check_assignment(assignment, *current); !why.empty())
      return failure(ErrorCode::invalid_replica_assignment, why);
  } else {
    if (rf > current->live_brokers())
      return failure(ErrorCode::invalid_replication_factor,
                     fmt::format("Replication factor: {} larger than available brokers: {}.", rf, current->live_brokers()));
    assignment = place_replicas(placement_brokers(*current), added, rf, placement_cursor_);
    if (!validate_only) placement_cursor_ += static_cast<uint32_t>(added);
  }
  auto topic = std::make_shared<TopicMetadata>(*t);
  for (auto& replicas : assignment) topic->partitions.push_back(fresh_partition(std::move(replicas)));
  if (validate_only) return TopicChange{ErrorCode::none, {}, topic, nullptr};
  std::vector<Bytes> records;
  for (int32_t p = t->partition_count(); p < total; ++p)
    records.push_back(partition_record(topic->id, p, topic->partitions[static_cast<size_t>(p)]));
  std::string why;
  if (ErrorCode e = commit(records, &why); e != ErrorCode::none) return failure(e, why);
  return applied(name, topic);
}

TopicChange MetadataStore::set_topic_configs(const std::string& name, const std::map<std::string, std::string>& configs,
                                             bool validate_only) {
  auto overrides = configs;
  if (auto [err, msg] = validate_topic_configs(overrides); err != ErrorCode::none) return failure(err, msg);
  if (!validate_only && channel_ && !leads()) {
    auto answer = channel_->set_topic_configs(name, overrides);
    if (answer.error != ErrorCode::none) return failure(answer.error, answer.message);
    return applied(name, image()->topic_ptr(name));
  }
  return edit_topic_configs(
      name,
      [&overrides](const MetadataImage&, std::map<std::string, std::string>& configs) {
        configs = overrides;
        return ChangeAnswer{};
      },
      validate_only);
}

TopicChange MetadataStore::edit_topic_configs(const std::string& name, const ConfigEdit& edit, bool validate_only) {
  std::lock_guard lock(write_mutex_);
  auto current = image();
  const TopicMetadata* t = current->topic(name);
  if (!t) return failure(ErrorCode::unknown_topic_or_partition, "This server does not host this topic.");
  auto overrides = t->configs;
  if (auto refused = edit(*current, overrides); refused.error != ErrorCode::none)
    return failure(refused.error, std::move(refused.message));
  if (auto [err, msg] = validate_topic_configs(overrides); err != ErrorCode::none) return failure(err, msg);
  auto topic = std::make_shared<TopicMetadata>(*t);
  topic->configs = overrides;
  if (validate_only) return TopicChange{ErrorCode::none, {}, topic, nullptr};
  std::vector<Bytes> records;
  add_config_changes(records, t->configs, overrides, [&](const std::string& k, const std::optional<std::string>& v) {
    return config_record(name, k, v);
  });
  if (records.empty()) return TopicChange{ErrorCode::none, {}, topic, current};
  std::string why;
  if (ErrorCode e = commit(records, &why); e != ErrorCode::none) return failure(e, why);
  return applied(name, topic);
}

TopicChange MetadataStore::set_broker_configs(const std::string& resource,
                                              const std::map<std::string, std::string>& configs, bool validate_only) {
  std::map<std::string, std::string> values;
  if (auto why = config::check_dynamic(configs, resource.empty(), &values)) return failure(ErrorCode::invalid_request, *why);
  if (validate_only) return TopicChange{};
  if (channel_ && !leads()) {
    auto answer = channel_->set_broker_configs(resource, values);
    if (answer.error != ErrorCode::none) return failure(answer.error, answer.message);
    return TopicChange{ErrorCode::none, {}, nullptr, image()};
  }
  return edit_broker_configs(
      resource,
      [&values](const MetadataImage&, std::map<std::string, std::string>& configs) {
        configs = values;
        return ChangeAnswer{};
      },
      false);
}

TopicChange MetadataStore::edit_broker_configs(const std::string& resource, const ConfigEdit& edit, bool validate_only) {
  std::lock_guard lock(write_mutex_);
  auto current = image();
  static const std::map<std::string, std::string> kNone;
  auto it = current->broker_configs->find(resource);
  const auto& before = it == current->broker_configs->end() ? kNone : it->second;
  auto edited = before;
  if (auto refused = edit(*current, edited); refused.error != ErrorCode::none)
    return failure(refused.error, std::move(refused.message));
  std::map<std::string, std::string> values;
  if (auto why = config::check_dynamic(edited, resource.empty(), &values)) return failure(ErrorCode::invalid_request, *why);
  if (validate_only) return TopicChange{ErrorCode::none, {}, nullptr, current};
  std::vector<Bytes> records;
  add_config_changes(records, before, values, [&](const std::string& k, const std::optional<std::string>& v) {
    return broker_config_record(resource, k, v);
  });
  if (records.empty()) return TopicChange{ErrorCode::none, {}, nullptr, current};
  std::string why;
  if (ErrorCode e = commit(records, &why); e != ErrorCode::none) return failure(e, why);
  return TopicChange{ErrorCode::none, {}, nullptr, image()};
}

void replay(const protocol::TopicRecord& r, MetadataImage& image) {
  auto t = std::make_shared<TopicMetadata>();
  t->name = r.name;
  t->id = r.topic_id;
  t->internal = is_internal_topic(r.name);
  image.put_topic(std::move(t));
}

void replay(const protocol::PartitionRecord& r, MetadataImage& image) {
  auto t = copy_topic(image, r.topic_id);
  if (!t || r.partition_id < 0) return;
  if (t->partition_count() <= r.partition_id) t->partitions.resize(static_cast<size_t>(r.partition_id) + 1);
  auto& a = t->partitions[static_cast<size_t>(r.partition_id)];
  a.replicas = r.replicas;
  a.isr = r.isr;
  a.leader = r.leader;
  a.leader_epoch = std::max(r.leader_epoch, 0);
  a.partition_epoch = std::max(r.partition_epoch, 0);
  a.elr = r.eligible_leader_replicas.value_or(std::vector<int32_t>{});
  a.adding = r.adding_replicas;
  a.removing = r.removing_replicas;
  image.put_topic(std::move(t));
}

void replay(const protocol::PartitionChangeRecord& r, MetadataImage& image) {
  auto t = copy_topic(image, r.topic_id);
  if (!t || r.partition_id < 0 || r.partition_id >= t->partition_count()) return;
  auto& a = t->partitions[static_cast<size_t>(r.partition_id)];
  if (r.isr) a.isr = *r.isr;
  if (r.replicas) a.replicas = *r.replicas;
  if (r.eligible_leader_replicas) a.elr = *r.eligible_leader_replicas;
  if (r.adding_replicas) a.adding = *r.adding_replicas;
  if (r.removing_replicas) a.removing = *r.removing_replicas;
  if (r.leader != -2) {
    a.leader = r.leader;
    ++a.leader_epoch;
  }
  ++a.partition_epoch;
  image.put_topic(std::move(t));
}

void replay(const protocol::ConfigRecord& r, MetadataImage& image) {
  if (r.resource_type == kBrokerResource) {
    auto configs = std::make_shared<config::DynamicConfigs>(*image.broker_configs);
    auto& layer = (*configs)[r.resource_name];
    if (r.value) {
      layer[r.name] = *r.value;
    } else {
      layer.erase(r.name);
      if (layer.empty()) configs->erase(r.resource_name);
    }
    image.broker_configs = std::move(configs);
    return;
  }
  if (r.resource_type != kTopicResource) return;
  const TopicMetadata* existing = image.topic(r.resource_name);
  if (!existing) return;
  auto t = std::make_shared<TopicMetadata>(*existing);
  if (r.value) {
    t->configs[r.name] = *r.value;
  } else {
    t->configs.erase(r.name);
  }
  image.put_topic(std::move(t));
}

void replay(const protocol::RemoveTopicRecord& r, MetadataImage& image) {
  if (const TopicMetadata* t = image.topic(r.topic_id)) image.remove_topic(t->name);
}

void replay(const protocol::TopicOwnerRecord& r, MetadataImage& image) {
  auto t = copy_topic(image, r.topic_id);
  if (!t) return;
  t->owner = r.principal;
  image.put_topic(std::move(t));
}

}  // namespace brokerd::metadata
