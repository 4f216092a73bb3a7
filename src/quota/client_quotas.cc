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
  if (key != kProducerByteRate && key != kConsumerByteRate && key != kControllerMutationRate &&
      key != kRequestPercentage) {
    if (key == "connection_creation_rate")
      return "Quota '" + key +
             "' is not enforced by this broker: producer_byte_rate, consumer_byte_rate, "
             "controller_mutation_rate and request_percentage are.";
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

namespace {

// <0, 0, >0 as a is before, equal to or after b.
int compare(const Entity& a, const EntityView& b) {
  for (size_t i = 0; i < a.size() && i < b.size; ++i) {
    if (int c = std::string_view(a[i].first).compare(b.parts[i].type); c != 0) return c;
    const auto& an = a[i].second;
    const auto& bn = b.parts[i].name;
    if (an.has_value() != bn.has_value()) return an.has_value() ? 1 : -1;
    if (an)
      if (int c = std::string_view(*an).compare(*bn); c != 0) return c;
  }
  return a.size() < b.size ? -1 : (a.size() > b.size ? 1 : 0);
}

}  // namespace

bool EntityOrder::operator()(const Entity& a, const EntityView& b) const { return compare(a, b) < 0; }
bool EntityOrder::operator()(const EntityView& a, const Entity& b) const { return compare(b, a) > 0; }

std::optional<Applied> applicable(const QuotaSet& quotas, std::string_view key, const std::string& user,
                                  const std::string& client_id) {
  using Part = EntityView::Part;
  constexpr std::optional<std::string_view> none;
  const Part c_own{kClientId, client_id}, c_default{kClientId, none};
  const Part u_own{kUser, user}, u_default{kUser, none};
  // Kafka's order (components sorted by type: client-id before user); what the bucket names.
  enum class Bucket { both, user, client };
  const std::pair<EntityView, Bucket> order[] = {
      {{{c_own, u_own}, 2}, Bucket::both},     {{{c_default, u_own}, 2}, Bucket::both},
      {{{u_own}, 1}, Bucket::user},            {{{c_own, u_default}, 2}, Bucket::both},
      {{{c_default, u_default}, 2}, Bucket::both}, {{{u_default}, 1}, Bucket::user},
      {{{c_own}, 1}, Bucket::client},          {{{c_default}, 1}, Bucket::client},
  };
  for (const auto& [view, bucket] : order) {
    auto it = quotas.find(view);
    if (it == quotas.end()) continue;
    auto v = it->second.find(key);
    if (v == it->second.end()) continue;
    std::string name(key);
    if (bucket != Bucket::client) name += ":user=" + user;
    if (bucket == Bucket::both) name += ",client-id=" + client_id;
    if (bucket == Bucket::client) name += ":client-id=" + client_id;
    return Applied{v->second, std::move(name)};
  }
  return std::nullopt;
}

}  // namespace brokerd::quota
