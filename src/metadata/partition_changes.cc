// The controller's changes of partitions: leader elections (ElectLeaders and the preferred
// leader balancer), reassignments, and the ISR changes leaders ask for (AlterPartition).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "brokerd/common/logger.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/metadata/partition_reassignment.h"
#include "metadata/metadata_records.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

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

}  // namespace brokerd::metadata
