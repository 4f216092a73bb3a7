#include "kafka/handlers/config_resources.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/config/broker_keys.h"
#include "brokerd/config/config_synonyms.h"
#include "brokerd/config/properties.h"
#include "brokerd/kafka/services.h"
#include "brokerd/net/blocking_pool.h"
#include "kafka/mirror_writes.h"

namespace brokerd::kafka {
namespace {

using config::PropertyDef;
using config::PropertyType;
using protocol::ErrorCode;

int8_t config_type_of(PropertyType t) {
  switch (t) {
    case PropertyType::boolean: return 1;
    case PropertyType::string: return 2;
    case PropertyType::choice: return 2;
    case PropertyType::int32: return 3;
    case PropertyType::int64: return 5;
    case PropertyType::ratio: return 6;
    case PropertyType::list: return 7;
    case PropertyType::password: return 9;
  }
  return 0;
}

// A key given in the static config (file or flag).
std::optional<std::string> static_value(const BrokerSettings& broker, const std::string& name) {
  if (!config::find_broker_property(name)) return std::nullopt;
  auto v = broker.statics.value(name);
  if (!v || broker.statics.source(name) == config::ConfigSource::default_value) return std::nullopt;
  return v;
}

// A key's built-in default: brokerd's for its own keys, else Kafka's for a key of the
// dynamic table; none for a listener form or a key without a default.
std::optional<std::string> default_value(const std::string& name) {
  if (config::listener_scoped_suffix(name)) return std::nullopt;
  if (const PropertyDef* def = config::find_broker_property(name))
    return def->no_default ? std::nullopt : std::optional<std::string>(def->default_value);
  const config::KeyClass key = config::classify_broker_key(name);
  if (key.row && key.row->kafka_default) return std::string(*key.row->kafka_default);
  return std::nullopt;
}

// Kafka's synonym list of broker key `name`: every layer in precedence order (this broker's
// dynamic values, the cluster's dynamic defaults, the static config, the built-in defaults),
// each over `name`'s synonyms in order, from the first entry named `name`.
std::vector<ConfigSynonym> broker_synonyms(const BrokerSettings& broker, const std::string& name) {
  const auto names = config::broker_synonyms(name);
  std::vector<ConfigSynonym> out;
  auto layer = [&](const std::string& resource, int8_t source) {
    for (const auto& n : names)
      if (const auto* v = config::layer_value(broker.dynamic, resource, n)) out.push_back({n, *v, source});
  };
  layer(std::to_string(broker.node_id), config_source::dynamic_broker);
  layer("", config_source::dynamic_default_broker);
  for (const auto& n : names)
    if (auto v = static_value(broker, n)) out.push_back({n, *v, config_source::static_broker});
  for (const auto& n : names)
    if (auto v = default_value(n)) out.push_back({n, *v, config_source::default_config});
  auto first = std::find_if(out.begin(), out.end(), [&](const ConfigSynonym& s) { return s.name == name; });
  out.erase(out.begin(), first);
  return out;
}

// The type, documentation and flags of broker key `name`: brokerd's for its own keys (and
// their listener forms), Kafka's type for the other keys of the dynamic table, none (and so
// sensitive, as Kafka answers a key it cannot type) for the rest.
ConfigEntry broker_entry(const std::string& name) {
  ConfigEntry e;
  e.name = name;
  const config::KeyClass key = config::classify_broker_key(name);
  if (const PropertyDef* def = config::find_broker_property(name)) {
    e.type = config_type_of(def->type);
    e.doc = def->doc;
  } else if (key.row) {
    e.type = static_cast<int8_t>(key.row->type);
  }
  e.sensitive = e.type == 0 || e.type == static_cast<int8_t>(config::KafkaType::password);
  // Kafka's read-only flag: not a key (without a listener) it changes at runtime.
  const bool dynamic = key.listener.empty() && (key.treatment == config::KeyTreatment::applied ||
                                                key.treatment == config::KeyTreatment::stored_ignored);
  e.read_only = !dynamic;
  return e;
}

// The value in force is the first synonym's (named `name`); none when nothing sets the key.
void take_first(ConfigEntry& e) {
  if (e.synonyms.empty()) {
    e.null_value = true;
    e.source = config_source::default_config;
    return;
  }
  e.value = e.synonyms.front().value;
  e.source = e.synonyms.front().source;
}

void sort_by_name(std::vector<ConfigEntry>& entries) {
  std::sort(entries.begin(), entries.end(), [](const ConfigEntry& a, const ConfigEntry& b) { return a.name < b.name; });
}

const PropertyDef* broker_synonym_of(std::string_view topic_property) {
  for (const auto& def : config::broker_properties())
    if (def.topic_name == topic_property) return &def;
  return nullptr;
}

}  // namespace

std::vector<ConfigEntry> topic_config_entries(const BrokerSettings& broker,
                                              const std::map<std::string, std::string>& topic_defaults,
                                              const std::map<std::string, std::string>& overrides) {
  std::vector<ConfigEntry> out;
  for (const auto& def : config::topic_properties()) {
    ConfigEntry e;
    e.name = std::string(def.name);
    e.type = config_type_of(def.type);
    e.read_only = false;
    const PropertyDef* synonym = broker_synonym_of(def.name);
    e.doc = !def.doc.empty() ? def.doc : synonym ? synonym->doc : std::string_view{};
    auto own = overrides.find(e.name);
    if (own != overrides.end()) e.synonyms.push_back({e.name, own->second, config_source::dynamic_topic});
    if (synonym) {
      auto inherited = broker_synonyms(broker, std::string(synonym->name));
      e.synonyms.insert(e.synonyms.end(), inherited.begin(), inherited.end());
    }
    // The value in force: the topic's own, else the broker's default in milliseconds (which
    // may come from a synonym the list leaves out, as log.retention.hours).
    if (own != overrides.end()) {
      e.value = own->second;
    } else if (auto it = topic_defaults.find(e.name); it != topic_defaults.end()) {
      e.value = it->second;
    } else {
      e.value = std::string(def.default_value);
    }
    e.source = e.synonyms.empty() ? config_source::default_config : e.synonyms.front().source;
    out.push_back(std::move(e));
  }
  sort_by_name(out);
  return out;
}

std::vector<ConfigEntry> broker_config_entries(const BrokerSettings& broker) {
  std::set<std::string> names;
  for (const auto& def : config::broker_properties()) names.emplace(def.name);
  for (const auto& resource : {std::to_string(broker.node_id), std::string()})
    if (auto layer = broker.dynamic.find(resource); layer != broker.dynamic.end())
      for (const auto& [name, value] : layer->second) names.insert(name);
  std::vector<ConfigEntry> out;
  for (const auto& name : names) {
    ConfigEntry e = broker_entry(name);
    e.synonyms = broker_synonyms(broker, name);
    take_first(e);
    out.push_back(std::move(e));
  }
  return out;  // `names` is sorted
}

std::vector<ConfigEntry> dynamic_default_entries(const BrokerSettings& broker) {
  std::vector<ConfigEntry> out;
  auto defaults = broker.dynamic.find("");
  if (defaults == broker.dynamic.end()) return out;
  for (const auto& [name, value] : defaults->second) {
    ConfigEntry e = broker_entry(name);
    for (auto& s : broker_synonyms(broker, name))
      if (s.source == config_source::dynamic_default_broker) e.synonyms.push_back(std::move(s));
    e.value = value;
    e.source = config_source::dynamic_default_broker;
    out.push_back(std::move(e));
  }
  sort_by_name(out);
  return out;
}

std::string broker_setting(const Services& svc, const std::string& name) {
  return config::effective_value(svc.config, *svc.metadata.image()->broker_configs, svc.node_id, name);
}

int64_t broker_integer(const Services& svc, const std::string& name) { return std::stoll(broker_setting(svc, name)); }

std::optional<std::string> check_broker_resource_name(std::string_view name, int32_t node_id) {
  if (name.empty()) return std::nullopt;
  int32_t id = 0;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || p != name.data() + name.size())
    return fmt::format("Broker id must be an integer, but it is: {}", name);
  if (id != node_id)
    return fmt::format("Unexpected broker id, expected {} or empty string, but received {}", node_id, name);
  return std::nullopt;
}

std::string resource_type_name(int8_t type) {
  switch (type) {
    case 0: return "UNKNOWN";
    case 1: return "ANY";
    case resource_type::topic: return "TOPIC";
    case 3: return "GROUP";
    case resource_type::broker: return "BROKER";
    case resource_type::broker_logger: return "BROKER_LOGGER";
    case 16: return "CLIENT_METRICS";
    default: return std::to_string(type);
  }
}

std::optional<ConfigResult> unsupported_alter_resource(int8_t type) {
  if (type == resource_type::topic || type == resource_type::broker) return std::nullopt;
  return ConfigResult{ErrorCode::invalid_request, fmt::format("Unsupported resource type: {}", resource_type_name(type))};
}

namespace {

// Runs `change` (a blocking metadata write) off the reactor, then brings this node's
// partitions in line with the image that has it.
template <typename Change>
boost::asio::awaitable<ConfigResult> write_configs(Services& svc, bool validate_only, Change change) {
  auto done = co_await svc.blocking.run(std::move(change));
  if (done.error == ErrorCode::none && done.image && !validate_only) co_await svc.partitions.reconcile(done.image);
  co_return ConfigResult{done.error, std::move(done.message)};
}

}  // namespace

boost::asio::awaitable<ConfigResult> write_topic_configs(Services& svc, const std::string& topic,
                                                         std::map<std::string, std::string> overrides,
                                                         bool validate_only) {
  // A mirror whose link copies configs keeps the source's: only the settings it does not
  // copy (min.insync.replicas, ...) are this cluster's to change.
  const auto image = svc.metadata.image();
  if (const metadata::TopicMetadata* t = image->topic(topic); t && !t->mirror_link.empty()) {
    const metadata::MirrorLink* link = image->link(t->mirror_link);
    auto copied = [](const std::map<std::string, std::string>& configs) {
      std::map<std::string, std::string> out;
      for (const auto& [k, v] : configs)
        if (metadata::mirrored_config(k)) out.emplace(k, v);
      return out;
    };
    if (link && link->sync_configs && copied(t->configs) != copied(overrides))
      if (auto refusal = refuse_mirror_write(topic, t->mirror_link)) co_return ConfigResult{refusal->error, refusal->message};
  }
  co_return co_await write_configs(svc, validate_only,
                                   [&] { return svc.metadata.set_topic_configs(topic, overrides, validate_only); });
}

boost::asio::awaitable<ConfigResult> write_broker_configs(Services& svc, const std::string& resource,
                                                          std::map<std::string, std::string> configs,
                                                          bool validate_only) {
  const auto before = svc.metadata.image()->broker_configs;
  auto result = co_await write_configs(svc, validate_only,
                                       [&] { return svc.metadata.set_broker_configs(resource, configs, validate_only); });
  if (result.error == ErrorCode::none && !validate_only) {
    auto layer = before->find(resource);
    config::note_keys_without_effect(resource, layer == before->end() ? std::map<std::string, std::string>{} : layer->second,
                                     configs);
  }
  co_return result;
}

}  // namespace brokerd::kafka
