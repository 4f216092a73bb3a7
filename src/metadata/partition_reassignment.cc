#include "brokerd/metadata/partition_reassignment.h"

#include <algorithm>
#include <set>

namespace brokerd::metadata {
namespace {

using protocol::ErrorCode;

bool contains(const std::vector<int32_t>& v, int32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<int32_t> minus(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<int32_t> out;
  for (int32_t x : a)
    if (!contains(b, x)) out.push_back(x);
  return out;
}

std::vector<int32_t> within(const std::vector<int32_t>& a, const std::vector<int32_t>& allowed) {
  std::vector<int32_t> out;
  for (int32_t x : a)
    if (contains(allowed, x)) out.push_back(x);
  return out;
}

bool live(const MetadataImage& image, int32_t id) {
  const BrokerInfo* b = image.broker(id);
  return b && !b->fenced;
}

// Keeps the ISR and ELR within the replicas, and gives a leader outside them (or none) the
// first live in-sync replica, in the replicas' order.
void settle(PartitionAssignment& p, const MetadataImage& image) {
  p.isr = within(p.isr, p.replicas);
  p.elr = within(p.elr, p.replicas);
  if (p.leader >= 0 && contains(p.replicas, p.leader) && contains(p.isr, p.leader)) return;
  if (p.leader < 0 && p.isr.empty()) return;
  p.leader = -1;
  for (int32_t r : p.replicas)
    if (contains(p.isr, r) && live(image, r)) {
      p.leader = r;
      break;
    }
}

}  // namespace

std::vector<int32_t> target_replicas(const PartitionAssignment& a) { return minus(a.replicas, a.removing); }
std::vector<int32_t> original_replicas(const PartitionAssignment& a) { return minus(a.replicas, a.adding); }

std::optional<PartitionAssignment> complete_reassignment(const PartitionAssignment& a, const MetadataImage& image) {
  if (!a.reassigning()) return std::nullopt;
  const auto target = target_replicas(a);
  for (int32_t r : target)
    if (!contains(a.isr, r)) return std::nullopt;
  PartitionAssignment done = a;
  done.replicas = target;
  done.adding.clear();
  done.removing.clear();
  settle(done, image);
  return done;
}

Reassignment reassign(const PartitionAssignment& a, const std::optional<std::vector<int32_t>>& target,
                      const MetadataImage& image, bool allow_replication_factor_change) {
  Reassignment out;
  const auto original = original_replicas(a);
  if (!target) {
    if (!a.reassigning()) return {ErrorCode::no_reassignment_in_progress, "No reassignment is in progress.", a};
    PartitionAssignment back = a;
    back.replicas = original;
    back.adding.clear();
    back.removing.clear();
    back.isr = within(a.isr, original);
    if (back.isr.empty())
      return {ErrorCode::invalid_replica_assignment,
              "Cannot cancel: none of the replicas before the reassignment is in sync.", a};
    settle(back, image);
    out.next = std::move(back);
    return out;
  }
  const auto& t = *target;
  if (t.empty()) return {ErrorCode::invalid_replica_assignment, "The replica list is empty.", a};
  if (std::set<int32_t>(t.begin(), t.end()).size() != t.size())
    return {ErrorCode::invalid_replica_assignment, "The replica list names a broker twice.", a};
  for (int32_t r : t)
    if (!image.broker(r))
      return {ErrorCode::invalid_replica_assignment, "Broker " + std::to_string(r) + " is not registered.", a};
  if (!allow_replication_factor_change && t.size() != original.size())
    return {ErrorCode::invalid_replication_factor,
            "The reassignment changes the replication factor from " + std::to_string(original.size()) + " to " +
                std::to_string(t.size()) + ", which the request does not allow.",
            a};
  PartitionAssignment next = a;
  next.replicas = t;
  for (int32_t r : minus(original, t)) next.replicas.push_back(r);
  next.adding = minus(t, original);
  next.removing = minus(original, t);
  settle(next, image);
  if (auto done = complete_reassignment(next, image)) next = std::move(*done);
  out.next = std::move(next);
  return out;
}

PartitionChange change_between(const PartitionAssignment& before, const PartitionAssignment& after) {
  PartitionChange c;
  if (after.replicas != before.replicas) c.replicas = after.replicas;
  if (after.isr != before.isr) c.isr = after.isr;
  if (after.elr != before.elr) c.elr = after.elr;
  if (after.adding != before.adding) c.adding = after.adding;
  if (after.removing != before.removing) c.removing = after.removing;
  if (after.leader != before.leader) c.leader = after.leader;
  return c;
}

}  // namespace brokerd::metadata
