#include "brokerd/config/dynamic_configs.h"

#include <fmt/format.h>

#include "brokerd/config/broker_config.h"
#include "brokerd/config/properties.h"

namespace brokerd::config {

const std::string* layer_value(const DynamicConfigs& all, const std::string& resource, std::string_view name) {
  auto r = all.find(resource);
  if (r == all.end()) return nullptr;
  auto v = r->second.find(std::string(name));
  return v == r->second.end() ? nullptr : &v->second;
}

std::optional<DynamicValue> dynamic_value(const DynamicConfigs& all, int32_t node_id, std::string_view name) {
  if (const auto* v = layer_value(all, std::to_string(node_id), name)) return DynamicValue{*v, DynamicLayer::per_broker};
  if (const auto* v = layer_value(all, "", name)) return DynamicValue{*v, DynamicLayer::cluster_default};
  return std::nullopt;
}

std::optional<std::string> check_dynamic(std::string_view name, std::string_view value, std::string* normalised) {
  const PropertyDef* def = find_broker_property(name);
  if (!def) return fmt::format("Unknown broker config name: {}", name);
  if (def->read_only) return fmt::format("Cannot update these configs dynamically: {} (it takes effect at restart)", name);
  return validate_value(*def, value, normalised);
}

std::string effective_value(const BrokerConfig& statics, const DynamicConfigs& all, int32_t node_id,
                            const std::string& name) {
  if (auto v = dynamic_value(all, node_id, name)) return v->value;
  return statics.raw(name);
}

}  // namespace brokerd::config
