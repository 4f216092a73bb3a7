#include "brokerd/metadata/metadata_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>

#include "brokerd/metadata/partition_reassignment.h"
#include "brokerd/metadata/placement.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/config/dynamic_configs.h"
#include "brokerd/protocol/wire.h"
#include "metadata/metadata_records.h"

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

// Appends one PartitionChangeRecord per update to `records`.
void add_change_records(std::vector<Bytes>& records, const std::vector<PartitionUpdate>& updates) {
  for (const auto& u : updates) records.push_back(partition_change_record(u.topic_id, u.partition, u.change));
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

MetadataStore::MetadataStore(std::string cluster_id, int32_t node_id)
    : self_id_(node_id), placement_cursor_(static_cast<uint32_t>(std::random_device{}())) {
  auto image = std::make_shared<MetadataImage>();
  image->cluster_id = std::move(cluster_id);
  image_.store(std::move(image));
  producer_ids_ = std::make_unique<ProducerIdManager>([this, node_id] { return allocate_producer_ids(node_id, -1); });
}

MetadataStore::~MetadataStore() = default;

void MetadataStore::publish(std::shared_ptr<MetadataImage> next) {
  next->seal();
  std::shared_ptr<const MetadataImage> published = next;
  image_.store(std::move(next));
  std::lock_guard lock(publish_mutex_);
  for (const auto& hook : publish_hooks_) hook(published);
  published_.notify_all();
}

void MetadataStore::wait_for_image(const std::function<bool(const MetadataImage&)>& done) {
  std::unique_lock lock(publish_mutex_);
  published_.wait_for(lock, std::chrono::seconds(10), [&] { return done(*image()); });
}

void MetadataStore::on_publish(std::function<void(std::shared_ptr<const MetadataImage>)> fn) {
  std::lock_guard lock(publish_mutex_);
  publish_hooks_.push_back(std::move(fn));
}

int32_t MetadataStore::controller_id() const { return quorum_ ? quorum_->status().leader_id : -1; }

int32_t MetadataStore::controller_for_clients() const {
  auto img = image();
  if (img->live(self_id_)) return self_id_;
  if (const int32_t leader = controller_id(); img->live(leader)) return leader;
  for (const auto& b : img->brokers) {
    if (!b.fenced) return b.node_id;
  }
  return -1;
}

int64_t MetadataStore::image_age_ms() const {
  if (!quorum_) return 0;
  const int64_t at = quorum_->status().confirmed_at_ms;
  return at < 0 ? std::numeric_limits<int64_t>::max() : std::max<int64_t>(0, steady_clock_ms() - at);
}

bool MetadataStore::leads() const {
  if (!quorum_) return false;
  auto s = quorum_->status();
  return s.role == raft::Role::leader && s.caught_up;
}

bool MetadataStore::wait_until_caught_up(const std::function<bool()>& stop) {
  auto log = module_logger("metadata");
  auto next_note = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!quorum_ || !quorum_->status().caught_up) {
    if (stop()) return false;
    if (std::chrono::steady_clock::now() >= next_note) {
      auto s = quorum_ ? quorum_->status() : quorum::QuorumStatus{};
      log->info("waiting for the metadata quorum (leader {}, epoch {}, applied {} of {})", s.leader_id, s.epoch,
                s.applied_offset, s.high_watermark);
      next_note += std::chrono::seconds(5);
    }
  }
  auto image = this->image();
  log->info("metadata replayed: {} topics, last offset {}", image->topic_count(), image->offset);
  return true;
}

void MetadataStore::apply(const std::vector<raft::Entry>& entries) {
  auto next = std::make_shared<MetadataImage>(*image());
  for (const auto& e : entries) {
    next->offset = e.offset;
    if (e.control) continue;
    try {
      apply_change(std::as_bytes(std::span<const char>(e.payload.data(), e.payload.size())), *next);
    } catch (const protocol::DecodeError& err) {
      // Committed bytes that do not decode: every replica skips them alike.
      module_logger("metadata")->error("metadata entry at offset {} does not decode: {}", e.offset, err.what());
    }
  }
  publish(std::move(next));
}

std::function<std::string()> MetadataStore::snapshot() {
  return [image = image()] { return encode_change(image_records(*image)); };
}

void MetadataStore::load_snapshot(const raft::Snapshot& snapshot) {
  auto next = std::make_shared<MetadataImage>();
  auto current = image();
  next->cluster_id = current->cluster_id;
  apply_change(std::as_bytes(std::span<const char>(snapshot.data.data(), snapshot.data.size())), *next);
  next->offset = snapshot.id.offset - 1;
  publish(std::move(next));
}

ErrorCode MetadataStore::commit(const std::vector<Bytes>& records, std::string* message,
                                std::chrono::milliseconds wait) {
  if (!quorum_) {
    *message = "no metadata quorum";
    return ErrorCode::not_controller;
  }
  auto future = quorum_->propose(encode_change(records));
  if (future.wait_for(wait) != std::future_status::ready) {
    *message = fmt::format("the metadata change was not committed within {} ms", wait.count());
    return ErrorCode::request_timed_out;
  }
  auto result = future.get();
  if (result.ok) return ErrorCode::none;
  *message = result.error;
  return ErrorCode::not_controller;
}

MetadataStore::ChangeAnswer MetadataStore::commit_settings(const std::vector<Bytes>& records) {
  if (!leads()) return {ErrorCode::not_controller, "This node is not the active controller."};
  if (records.empty()) return {};
  std::lock_guard lock(write_mutex_);
  ChangeAnswer answer;
  answer.error = commit(records, &answer.message);
  return answer;
}

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
  auto answers = channel_->create_topics(sent);
  // Created ones by their id; those created through another node a moment ago by name.
  wait_for_image([&](const MetadataImage& img) {
    for (size_t k = 0; k < sent.size(); ++k) {
      const TopicMetadata* t = img.topic(sent[k].name);
      if (answers[k].error == ErrorCode::none && (!t || t->id != answers[k].topic_id)) return false;
      if (answers[k].error == ErrorCode::topic_already_exists && !t) return false;
    }
    return true;
  });
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
    wait_for_image([&](const MetadataImage& img) {
      const TopicMetadata* t = img.topic(name);
      return !t || !before || t->id != before->id;
    });
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
    wait_for_image([&](const MetadataImage& img) {
      const TopicMetadata* t = img.topic(name);
      return !t || t->partition_count() >= total;
    });
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

std::pair<ErrorCode, int64_t> MetadataStore::register_broker(BrokerInfo broker, const std::string& listener,
                                                             bool clean_shutdown) {
  std::lock_guard lock(write_mutex_);
  auto current = image();
  int64_t epoch = current->offset + 1;
  for (const auto& b : current->brokers) epoch = std::max(epoch, b.epoch + 1);
  broker.epoch = epoch;
  broker.fenced = true;
  broker.listener = listener;
  std::vector<Bytes> records{register_broker_record(broker)};
  std::vector<PartitionUpdate> updates;
  if (!clean_shutdown) updates = elect_on_unclean_restart(*current, broker.node_id, default_min_isr_, injected_bugs_);
  add_change_records(records, updates);
  std::string why;
  if (ErrorCode e = commit(records, &why); e != ErrorCode::none) return {e, -1};
  module_logger("metadata")->info("registered broker {} at {}:{} (rack '{}', epoch {}{})", broker.node_id, broker.host,
                                 broker.port, broker.rack, epoch,
                                 clean_shutdown ? "" : fmt::format(", after an unclean stop: {} partition(s) changed",
                                                                   updates.size()));
  return {ErrorCode::none, epoch};
}

ErrorCode MetadataStore::set_broker_fenced(int32_t id, int64_t epoch, bool fenced, std::chrono::milliseconds wait) {
  std::lock_guard lock(write_mutex_);
  // Held for the whole decision: a published image may replace it meanwhile.
  auto current = image();
  const BrokerInfo* b = current->broker(id);
  if (!b || b->epoch != epoch) return ErrorCode::stale_broker_epoch;
  if (b->fenced == fenced) return ErrorCode::none;
  // With the leader elections it causes, in the same change.
  std::vector<Bytes> records{fence_broker_record(id, epoch, fenced)};
  const auto updates =
      fenced ? elect_on_fence(*current, id, default_min_isr_, injected_bugs_)
             : elect_on_unfence(*current, id, default_min_isr_, injected_bugs_);
  add_change_records(records, updates);
  std::string why;
  if (ErrorCode e = commit(records, &why, wait); e != ErrorCode::none) return e;
  module_logger("metadata")->info("{} broker {} (epoch {}), {} partition(s) changed", fenced ? "fenced" : "unfenced", id,
                                 epoch, updates.size());
  return ErrorCode::none;
}

MetadataStore::ElectionAnswer MetadataStore::elect_leaders(const std::optional<std::vector<ElectionTarget>>& targets,
                                                          ElectionType type) {
  ElectionAnswer answer;
  if (!leads()) {
    answer.error = ErrorCode::not_controller;
    answer.message = "This node is not the active controller.";
    return answer;
  }
  std::lock_guard lock(write_mutex_);
  auto elections = metadata::elect_leaders(*image(), targets, type);
  std::vector<Bytes> records;
  add_change_records(records, elections.updates);
  if (!records.empty()) {
    std::string why;
    if (ErrorCode e = commit(records, &why); e != ErrorCode::none) {
      answer.error = e;
      answer.message = why;
      return answer;
    }
    module_logger("metadata")->info("{} election: {} partition(s) changed leader",
                                   type == ElectionType::preferred ? "preferred" : "unclean", records.size());
  }
  answer.results = std::move(elections.results);
  return answer;
}

size_t MetadataStore::rebalance_leaders(int32_t imbalance_percent) {
  if (!leads()) return 0;
  std::lock_guard lock(write_mutex_);
  const auto updates = metadata::rebalance_leaders(*image(), imbalance_percent);
  if (updates.empty()) return 0;
  std::vector<Bytes> records;
  add_change_records(records, updates);
  std::string why;
  if (commit(records, &why) != ErrorCode::none) {
    module_logger("metadata")->warn("leader balance: committing {} preferred election(s) failed: {}", records.size(), why);
    return 0;
  }
  module_logger("metadata")->info("leader balance: {} partition(s) led by their preferred replica again", records.size());
  return records.size();
}

MetadataStore::ReassignmentAnswer MetadataStore::reassign_partitions(const std::vector<ReassignmentTarget>& targets,
                                                                    bool allow_replication_factor_change) {
  ReassignmentAnswer answer;
  if (!leads()) {
    answer.error = ErrorCode::not_controller;
    answer.message = "This node is not the active controller.";
    return answer;
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  // A partition named twice takes its last target; each entry is answered.
  std::map<std::pair<std::string, int32_t>, size_t> last;
  for (size_t i = 0; i < targets.size(); ++i) last[{targets[i].topic, targets[i].partition}] = i;
  answer.results.resize(targets.size());
  std::vector<PartitionUpdate> updates;
  std::vector<size_t> changed;
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& target = targets[i];
    const TopicMetadata* t = current->topic(target.topic);
    const PartitionAssignment* a = t ? t->partition(target.partition) : nullptr;
    if (!a) {
      answer.results[i] = {ErrorCode::unknown_topic_or_partition, "The partition does not exist."};
      continue;
    }
    auto r = reassign(*a, target.replicas, *current, allow_replication_factor_change);
    answer.results[i] = {r.error, r.message};
    if (r.error != ErrorCode::none || last[{target.topic, target.partition}] != i) continue;
    PartitionChange change = change_between(*a, r.next);
    if (change.replicas || change.isr || change.elr || change.adding || change.removing || change.leader) {
      updates.push_back({t->id, target.partition, std::move(change)});
      changed.push_back(i);
    }
  }
  if (updates.empty()) return answer;
  std::vector<Bytes> records;
  add_change_records(records, updates);
  std::string why;
  if (ErrorCode e = commit(records, &why); e != ErrorCode::none) {
    for (size_t i : changed) answer.results[i] = {e, why};
    return answer;
  }
  for (size_t k = 0; k < updates.size(); ++k) {
    const auto& target = targets[changed[k]];
    const auto* a = image()->topic(target.topic);
    const auto* p = a ? a->partition(target.partition) : nullptr;
    if (!p) continue;
    module_logger("metadata")->info("{}-{}: {} (replicas {}, adding {}, removing {})", target.topic, target.partition,
                                   !target.replicas ? "reassignment cancelled"
                                   : p->reassigning() ? "reassignment started" : "reassigned",
                                   fmt::join(p->replicas, ","), fmt::join(p->adding, ","), fmt::join(p->removing, ","));
  }
  return answer;
}

std::vector<AlterPartitionAnswer> MetadataStore::alter_partitions(const std::vector<AlterPartitionItem>& items) {
  if (channel_ && !leads()) {
    auto answers = channel_->alter_partitions(items);
    // Answered once this node's image shows the accepted changes.
    wait_for_image([&](const MetadataImage& img) {
      for (size_t i = 0; i < items.size(); ++i) {
        if (answers[i].error != ErrorCode::none) continue;
        const TopicMetadata* t = img.topic(items[i].topic_id);
        const PartitionAssignment* a = t ? t->partition(items[i].partition) : nullptr;
        if (a && a->partition_epoch < answers[i].assignment.partition_epoch) return false;
      }
      return true;
    });
    return answers;
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  replication::BrokerLiveness live;
  for (const auto& b : current->brokers) {
    if (!b.fenced) live.live.push_back(b.node_id);
    live.epochs.emplace_back(b.node_id, b.epoch);
  }
  std::vector<AlterPartitionAnswer> answers(items.size());
  struct Accepted {
    size_t item;
    const TopicMetadata* topic;
    PartitionAssignment before;
    bool completed;
  };
  std::vector<Accepted> accepted;
  std::vector<Bytes> records;
  // A partition named twice: the second item is checked against the first's result.
  std::map<std::pair<protocol::Uuid, int32_t>, PartitionAssignment> proposed;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    const TopicMetadata* t = current->topic(item.topic_id);
    const PartitionAssignment* a = t ? t->partition(item.partition) : nullptr;
    if (!a) {
      answers[i] = {ErrorCode::unknown_topic_or_partition, {}};
      continue;
    }
    const auto key = std::make_pair(item.topic_id, item.partition);
    if (auto it = proposed.find(key); it != proposed.end()) a = &it->second;
    replication::PartitionState state;
    state.leader = a->leader;
    state.leader_epoch = a->leader_epoch;
    state.partition_epoch = a->partition_epoch;
    state.replicas = a->replicas;
    state.isr = a->isr;
    const auto result = replication::apply_alter_partition(state, item.request, live, 1);
    if (result.error != ErrorCode::none) {
      answers[i] = {result.error, *a};
      continue;
    }
    PartitionAssignment next = *a;
    next.isr = result.state.isr;
    // The ISR now holding every target replica completes a reassignment, in the same change.
    const auto completed = complete_reassignment(next, *current);
    if (completed) next = *completed;
    records.push_back(partition_change_record(item.topic_id, item.partition, change_between(*a, next)));
    accepted.push_back({i, t, *a, completed.has_value()});
    ++next.partition_epoch;
    if (next.leader != a->leader) ++next.leader_epoch;
    answers[i] = {ErrorCode::none, next};
    proposed[key] = std::move(next);
  }
  if (records.empty()) return answers;
  std::string why;
  if (ErrorCode e = commit(records, &why); e != ErrorCode::none) {
    for (const auto& acc : accepted) answers[acc.item] = {e, acc.before};
    return answers;
  }
  for (const auto& acc : accepted) {
    const auto& next = answers[acc.item].assignment;
    const int32_t partition = items[acc.item].partition;
    // A replica leaving the ISR is news to an operator; one catching up again is routine
    // (after a node returns, every partition it holds expands).
    module_logger("metadata")->log(next.isr.size() < acc.before.isr.size() ? spdlog::level::info : spdlog::level::debug,
                                  "{}-{}: ISR {} -> {} (leader {}, epoch {})", acc.topic->name, partition,
                                  fmt::join(acc.before.isr, ","), fmt::join(next.isr, ","), next.leader, next.leader_epoch);
    if (acc.completed)
      module_logger("metadata")->info("{}-{}: reassignment complete, replicas {}", acc.topic->name, partition,
                                     fmt::join(next.replicas, ","));
  }
  return answers;
}

ProducerIdBlock MetadataStore::allocate_producer_ids(int32_t broker_id, int64_t broker_epoch) {
  if (channel_ && !leads()) {
    auto block = channel_->allocate_producer_ids(broker_id, broker_epoch);
    if (!block) throw std::runtime_error("cannot allocate producer ids: the controller did not answer");
    return *block;
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  ProducerIdBlock block{broker_id, current->next_producer_id, ProducerIdManager::kBlockSize};
  std::string why;
  if (ErrorCode e = commit({producer_ids_record(broker_id, broker_epoch, block.end())}, &why); e != ErrorCode::none)
    throw std::runtime_error("cannot allocate producer ids: " + why);
  module_logger("metadata")->info("allocated producer ids [{}, {}) to node {}", block.first, block.end(), broker_id);
  return block;
}

TopicChange MetadataStore::set_topic_configs(const std::string& name, const std::map<std::string, std::string>& configs,
                                             bool validate_only) {
  auto overrides = configs;
  if (auto [err, msg] = validate_topic_configs(overrides); err != ErrorCode::none) return failure(err, msg);
  if (!validate_only && channel_ && !leads()) {
    auto answer = channel_->set_topic_configs(name, overrides);
    if (answer.error != ErrorCode::none) return failure(answer.error, answer.message);
    wait_for_image([&](const MetadataImage& img) {
      const TopicMetadata* t = img.topic(name);
      return !t || t->configs == overrides;
    });
    return applied(name, image()->topic_ptr(name));
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  const TopicMetadata* t = current->topic(name);
  if (!t) return failure(ErrorCode::unknown_topic_or_partition, "This server does not host this topic.");
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
    wait_for_image([&](const MetadataImage& img) {
      auto it = img.broker_configs->find(resource);
      return values.empty() ? it == img.broker_configs->end() : it != img.broker_configs->end() && it->second == values;
    });
    return TopicChange{ErrorCode::none, {}, nullptr, image()};
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  static const std::map<std::string, std::string> kNone;
  auto it = current->broker_configs->find(resource);
  const auto& before = it == current->broker_configs->end() ? kNone : it->second;
  std::vector<Bytes> records;
  add_config_changes(records, before, values, [&](const std::string& k, const std::optional<std::string>& v) {
    return broker_config_record(resource, k, v);
  });
  if (records.empty()) return TopicChange{ErrorCode::none, {}, nullptr, current};
  std::string why;
  if (ErrorCode e = commit(records, &why); e != ErrorCode::none) return failure(e, why);
  return TopicChange{ErrorCode::none, {}, nullptr, image()};
}

}  // namespace brokerd::metadata
