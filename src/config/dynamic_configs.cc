#include "brokerd/config/dynamic_configs.h"

#include <fmt/format.h>

#include <vector>

#include "brokerd/common/logger.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/config/broker_keys.h"
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

namespace {

// Kafka's way of naming the keys a reason applies to.
std::string key_set(const std::vector<std::string>& names) {
  std::string out = "Set(";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out + ")";
}

// Why `value` does not fit key `name`: brokerd's own bounds for a key it applies, Kafka's
// type otherwise.
std::optional<std::string> check_value(const std::string& name, const KeyClass& key, const std::string& value,
                                       std::string* normalised) {
  *normalised = value;
  if (key.treatment == KeyTreatment::applied) {
    const PropertyDef* def = find_broker_property(name);
    return def ? validate_value(*def, value, normalised) : std::nullopt;
  }
  return key.row ? check_kafka_type(name, key.row->type, value) : std::nullopt;
}

}  // namespace

std::optional<std::string> check_dynamic(const std::map<std::string, std::string>& configs, bool cluster_default,
                                         std::map<std::string, std::string>* normalised) {
  std::vector<std::string> read_only, needs_listener, needs_broker;
  std::optional<std::string> bad_value;
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : configs) {
    const KeyClass key = classify_broker_key(name);
    if (key.treatment == KeyTreatment::read_only) {
      read_only.push_back(name);
      continue;
    }
    if (key.row && key.listener.empty() && key.row->scope == KeyScope::listener_only) needs_listener.push_back(name);
    // Kafka keeps per-listener keys, except its connection limits, per broker.
    const bool connection_limit = key.row && (key.row->name == "max.connections" || key.row->name == "max.connection.creation.rate");
    const bool per_broker = key.row && key.row->scope != KeyScope::cluster_wide;
    if (cluster_default && (per_broker || (!key.listener.empty() && !connection_limit))) needs_broker.push_back(name);
    std::string n;
    if (auto err = check_value(name, key, value, &n); err && !bad_value) bad_value = std::move(err);
    out[name] = std::move(n);
  }
  if (!read_only.empty()) return "Cannot update these configs dynamically: " + key_set(read_only);
  if (!needs_listener.empty())
    return "These security configs can be dynamically updated only per-listener using the listener prefix: " +
           key_set(needs_listener);
  if (bad_value) return bad_value;
  if (!needs_broker.empty())
    return "Cannot update these configs at default cluster level, broker id must be specified: " + key_set(needs_broker);
  if (normalised) *normalised = std::move(out);
  return std::nullopt;
}

void note_keys_without_effect(const std::string& resource, const std::map<std::string, std::string>& before,
                              const std::map<std::string, std::string>& after) {
  for (const auto& [name, value] : after) {
    if (auto it = before.find(name); it != before.end() && it->second == value) continue;
    const KeyClass key = classify_broker_key(name);
    const std::string where = resource.empty() ? "the cluster default" : "broker " + resource;
    if (key.treatment == KeyTreatment::stored_ignored) {
      module_logger("config")->warn("dynamic broker config {} stored for {}; brokerd does not act on it: {}", name, where,
                                    key.row ? key.row->note : std::string_view{});
    } else if (key.treatment == KeyTreatment::unknown) {
      module_logger("config")->warn("dynamic broker config {} stored for {}; it is not a broker config brokerd knows", name,
                                    where);
    }
  }
}

std::string effective_value(const BrokerConfig& statics, const DynamicConfigs& all, int32_t node_id,
                            const std::string& name) {
  if (auto v = dynamic_value(all, node_id, name)) return v->value;
  return statics.value(name).value_or("");
}

}  // namespace brokerd::config
