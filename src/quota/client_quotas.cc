#include "brokerd/quota/client_quotas.h"

#include <algorithm>
#include <set>

namespace brokerd::quota {

Entity normalized(Entity e) {
  std::sort(e.begin(), e.end(), [](const Component& a, const Component& b) { return a.first < b.first; });
  return e;
}

std::string to_string(const Entity& e) {
  std::string out;
  for (const auto& [type, name] : e) {
    if (!out.empty()) out += ",";
    out += type + "=" + (name ? *name : "<default>");
  }
  return out;
}

std::string check_entity(const Entity& e) {
  if (e.empty()) return "The entity names no component.";
  std::set<std::string> types;
  for (const auto& [type, name] : e) {
    if (type != kUser && type != kClientId) {
      if (type == kIp) return "IP quotas (connection_creation_rate) are not enforced by this broker.";
      return "Unknown entity type '" + type + "': expected user or client-id.";
    }
    if (!types.insert(type).second) return "The entity names " + type + " twice.";
  }
  return {};
}

std::string check_op(const std::string& key, double value, bool remove) {
  if (key != kProducerByteRate && key != kConsumerByteRate && key != kControllerMutationRate) {
    if (key == "request_percentage" || key == "connection_creation_rate")
      return "Quota '" + key +
             "' is not enforced by this broker: producer_byte_rate, consumer_byte_rate and controller_mutation_rate are.";
    return "Unknown quota key '" + key + "'.";
  }
  if (!remove && !(value > 0)) return "Quota " + key + " must be positive.";
  return {};
}

std::string check_filter(const std::vector<FilterComponent>& filter) {
  std::set<std::string> types;
  for (const auto& c : filter) {
    if (c.match_type != kMatchExact && c.match_type != kMatchDefault && c.match_type != kMatchAny)
      return "Unknown match type " + std::to_string(c.match_type) + ".";
    if (c.match_type == kMatchExact && !c.match) return "An exact match names no entity.";
    if (!types.insert(c.entity_type).second) return "Duplicate filter component entity type " + c.entity_type + ".";
  }
  return {};
}

bool matches(const Entity& e, const std::vector<FilterComponent>& filter, bool strict) {
  for (const auto& c : filter) {
    auto it = std::find_if(e.begin(), e.end(), [&](const Component& x) { return x.first == c.entity_type; });
    if (it == e.end()) return false;
    if (c.match_type == kMatchExact && it->second != c.match) return false;
    if (c.match_type == kMatchDefault && it->second) return false;
  }
  return !strict || e.size() == filter.size();
}

std::optional<Applied> applicable(const QuotaSet& quotas, std::string_view key, const std::string& user,
                                  const std::string& client_id) {
  using Name = std::optional<std::string>;
  const Name none;
  // Kafka's order; each with the bucket its clients share.
  struct Candidate {
    Entity entity;
    std::string bucket;
  };
  const std::string u = std::string(kUser), c = std::string(kClientId);
  const Candidate order[] = {
      {{{c, client_id}, {u, user}}, "user=" + user + ",client-id=" + client_id},
      {{{c, none}, {u, user}}, "user=" + user + ",client-id=" + client_id},
      {{{u, user}}, "user=" + user},
      {{{c, client_id}, {u, none}}, "user=" + user + ",client-id=" + client_id},
      {{{c, none}, {u, none}}, "user=" + user + ",client-id=" + client_id},
      {{{u, none}}, "user=" + user},
      {{{c, client_id}}, "client-id=" + client_id},
      {{{c, none}}, "client-id=" + client_id},
  };
  for (const auto& cand : order) {
    auto it = quotas.find(cand.entity);
    if (it == quotas.end()) continue;
    auto v = it->second.find(std::string(key));
    if (v != it->second.end()) return Applied{v->second, std::string(key) + ":" + cand.bucket};
  }
  return std::nullopt;
}

}  // namespace brokerd::quota
