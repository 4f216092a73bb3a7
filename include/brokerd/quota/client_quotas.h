#pragma once
// Client quotas (KIP-55, KIP-546) as data: which entities have which byte rates, the checks
// AlterClientQuotas applies, the filters DescribeClientQuotas matches, and which quota a
// client's connection falls under, by Kafka's precedence. Pure: no clocks, no I/O.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace brokerd::quota {

inline constexpr std::string_view kUser = "user", kClientId = "client-id", kIp = "ip";
inline constexpr std::string_view kProducerByteRate = "producer_byte_rate";
inline constexpr std::string_view kConsumerByteRate = "consumer_byte_rate";
// KIP-599: partitions created or deleted per second (CreateTopics, CreatePartitions, DeleteTopics).
inline constexpr std::string_view kControllerMutationRate = "controller_mutation_rate";
// KIP-124: the share of one reactor thread a client's requests may use, in percent.
inline constexpr std::string_view kRequestPercentage = "request_percentage";

// An entity: its components sorted by type, each with a name or, for the default entity of
// that type ("<default>"), none.
using Component = std::pair<std::string, std::optional<std::string>>;
using Entity = std::vector<Component>;
// An entity looked up without building one: up to two components, names borrowed.
struct EntityView {
  struct Part {
    std::string_view type;
    std::optional<std::string_view> name;  // nullopt: the default entity
  };
  Part parts[2];
  size_t size = 0;
};
// Entity order (lexicographic by component, a default name before any name), also between
// an Entity and an EntityView.
struct EntityOrder {
  using is_transparent = void;
  bool operator()(const Entity& a, const Entity& b) const { return a < b; }
  bool operator()(const Entity& a, const EntityView& b) const;
  bool operator()(const EntityView& a, const Entity& b) const;
};
// The quotas set: entity -> key -> value.
using QuotaSet = std::map<Entity, std::map<std::string, double, std::less<>>, EntityOrder>;

// Sorted by type, as QuotaSet keys are.
Entity normalized(Entity e);

// The wire forms: any message's list of entity components (entity_type, entity_name).
template <typename Components>
Entity entity_of(const Components& in) {
  Entity e;
  for (const auto& c : in) e.emplace_back(c.entity_type, c.entity_name);
  return e;
}
template <typename Components>
void put_entity(const Entity& e, Components& out) {
  for (const auto& [type, name] : e) {
    auto& c = out.emplace_back();
    c.entity_type = type;
    c.entity_name = name;
  }
}
// "user=alice,client-id=<default>" for logs and errors.
std::string to_string(const Entity& e);

// Why AlterClientQuotas refuses an entity (empty: acceptable): a user, a client id, both, or
// nothing else; no type twice.
std::string check_entity(const Entity& e);
// Why it refuses one operation on an accepted entity: only the byte rates and the controller
// mutation rate are enforced here, and a value must be positive.
std::string check_op(const std::string& key, double value, bool remove);

// DescribeClientQuotas: one component of the filter.
struct FilterComponent {
  std::string entity_type;
  int8_t match_type = 0;  // 0 this name, 1 the default entity, 2 any entity of the type
  std::optional<std::string> match;
};
inline constexpr int8_t kMatchExact = 0, kMatchDefault = 1, kMatchAny = 2;
// Why the filter is refused (empty: acceptable): unknown match type, a type twice.
std::string check_filter(const std::vector<FilterComponent>& filter);
// Whether `e` matches: every component finds its type in `e` as asked; with strict, `e` has
// no other type.
bool matches(const Entity& e, const std::vector<FilterComponent>& filter, bool strict);

// The quota `key` that applies to a client, and the bucket it shares: the first entity set
// in Kafka's order (user+client, user+default client, user, default user+client, default
// user+default client, default user, client, default client). The bucket names the client's
// own user and client id where the matched entity does (a default entity gives each user or
// client its own bucket).
// Allocates only for the answer.
struct Applied {
  double value = 0;
  std::string bucket;
};
std::optional<Applied> applicable(const QuotaSet& quotas, std::string_view key, const std::string& user,
                                  const std::string& client_id);

}  // namespace brokerd::quota
