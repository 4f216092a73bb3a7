#include "brokerd/metadata/placement.h"

#include <algorithm>
#include <map>
#include <set>

namespace brokerd::metadata {
namespace {

// A broker without a rack is a rack of its own.
std::string rack_key(const PlacementBroker& b) { return b.rack.empty() ? "\x01" + std::to_string(b.id) : b.rack; }

// Racks alternate: the first broker (by id) of each rack, then the second of each, ...
std::vector<PlacementBroker> rack_alternating(std::vector<PlacementBroker> brokers) {
  std::map<std::string, std::vector<PlacementBroker>> by_rack;
  std::sort(brokers.begin(), brokers.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (auto& b : brokers) by_rack[rack_key(b)].push_back(b);
  std::vector<PlacementBroker> order;
  for (size_t round = 0; order.size() < brokers.size(); ++round)
    for (const auto& [rack, members] : by_rack)
      if (round < members.size()) order.push_back(members[round]);
  return order;
}

}  // namespace

std::vector<std::vector<int32_t>> place_replicas(std::vector<PlacementBroker> brokers, int32_t partitions,
                                                 int32_t replication_factor, uint32_t start) {
  const auto order = rack_alternating(std::move(brokers));
  const size_t n = order.size();
  std::set<std::string> all_racks;
  for (const auto& b : order) all_racks.insert(rack_key(b));
  if (n == 0) return {};
  std::vector<std::vector<int32_t>> out;
  out.reserve(static_cast<size_t>(std::max(partitions, 0)));
  for (int32_t p = 0; p < partitions; ++p) {
    const size_t slot = static_cast<size_t>(start) + static_cast<size_t>(p);
    const size_t leader = slot % n;
    const size_t shift = n > 1 ? (slot / n) % (n - 1) : 0;
    std::vector<size_t> chosen{leader};
    std::set<std::string> racks{rack_key(order[leader])};
    while (chosen.size() < static_cast<size_t>(replication_factor)) {
      // First a broker of a rack the partition does not use yet; failing that, any other.
      size_t pick = n;
      for (int pass = 0; pass < 2 && pick == n; ++pass) {
        for (size_t step = 0; step < n && pick == n; ++step) {
          size_t i = (leader + 1 + shift + step) % n;
          if (std::find(chosen.begin(), chosen.end(), i) != chosen.end()) continue;
          if (pass == 0 && racks.contains(rack_key(order[i]))) continue;
          pick = i;
        }
      }
      if (pick == n) break;  // fewer brokers than replicas: the caller checks first
      chosen.push_back(pick);
      racks.insert(rack_key(order[pick]));
      if (racks.size() == all_racks.size()) racks.clear();  // every rack has one: start a new round
    }
    std::vector<int32_t> replicas;
    for (size_t i : chosen) replicas.push_back(order[i].id);
    out.push_back(std::move(replicas));
  }
  return out;
}

std::vector<PlacementBroker> placement_brokers(const MetadataImage& image) {
  std::vector<PlacementBroker> out;
  for (const auto& b : image.brokers)
    if (!b.fenced) out.push_back({b.node_id, b.rack});
  return out;
}

}  // namespace brokerd::metadata
