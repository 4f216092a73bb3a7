#include "brokerd/config/broker_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdint>
#include <thread>

#include "brokerd/config/config_synonyms.h"
#include "brokerd/config/properties.h"

namespace brokerd::config {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Endpoint parse_endpoint(const std::string& key, const std::string& text) {
  auto sep = text.find("://");
  if (sep == std::string::npos || sep == 0)
    throw ConfigError(fmt::format("{}: '{}' is not of the form NAME://host:port", key, text));
  Endpoint ep;
  ep.listener = text.substr(0, sep);
  std::string rest = text.substr(sep + 3);
  auto colon = rest.rfind(':');
  if (colon == std::string::npos) throw ConfigError(fmt::format("{}: '{}' has no port", key, text));
  ep.host = rest.substr(0, colon);
  if (ep.host.size() >= 2 && ep.host.front() == '[' && ep.host.back() == ']') ep.host = ep.host.substr(1, ep.host.size() - 2);
  std::string port = rest.substr(colon + 1);
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535)
    throw ConfigError(fmt::format("{}: '{}' has an invalid port '{}'", key, text, port));
  ep.port = static_cast<uint16_t>(p);
  return ep;
}

BrokerConfig::BrokerConfig() {
  for (const auto& def : broker_properties()) values_[std::string(def.name)] = {std::string(def.default_value), ConfigSource::default_value};
}

void BrokerConfig::set(const std::string& key, const std::string& value, ConfigSource source) {
  const PropertyDef* def = find_broker_property(key);
  if (!def) throw ConfigError(fmt::format("unknown setting '{}'", key));
  std::string normalised;
  if (auto err = validate_value(*def, value, &normalised)) throw ConfigError(*err);
  if (auto suffix = listener_scoped_suffix(key)) {
    // Kafka writes the listener part in lower case; accept any case.
    const std::string listener = key.substr(14, key.size() - 14 - suffix->size() - 1);
    values_["listener.name." + lower(listener) + "." + std::string(*suffix)] = {std::move(normalised), source};
    return;
  }
  values_[key] = {std::move(normalised), source};
}

const std::string& BrokerConfig::raw(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw std::logic_error("no broker property " + key);
  return it->second.first;
}

ConfigSource BrokerConfig::source(const std::string& key) const { return values_.at(key).second; }

std::optional<std::string> BrokerConfig::value(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  if (it->second.second == ConfigSource::default_value) {
    const PropertyDef* def = find_broker_property(key);
    if (!def || def->no_default) return std::nullopt;
  }
  return it->second.first;
}
int64_t BrokerConfig::integer(const std::string& key) const { return std::stoll(raw(key)); }
bool BrokerConfig::boolean(const std::string& key) const { return raw(key) == "true"; }
double BrokerConfig::ratio(const std::string& key) const { return std::stod(raw(key)); }

std::vector<std::string> BrokerConfig::list(const std::string& key) const {
  std::vector<std::string> out;
  const std::string& s = raw(key);
  size_t start = 0;
  while (start < s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::vector<Endpoint> BrokerConfig::listeners() const {
  std::vector<Endpoint> out;
  for (const auto& l : list("listeners")) out.push_back(parse_endpoint("listeners", l));
  return out;
}

std::vector<Endpoint> BrokerConfig::advertised_listeners() const {
  auto adv = list("advertised.listeners");
  if (adv.empty()) {
    auto eps = listeners();
    for (auto& ep : eps)
      if (ep.host.empty() || ep.host == "0.0.0.0" || ep.host == "::") ep.host = "127.0.0.1";
    return eps;
  }
  std::vector<Endpoint> out;
  for (const auto& l : adv) out.push_back(parse_endpoint("advertised.listeners", l));
  return out;
}

std::vector<std::filesystem::path> BrokerConfig::log_dirs() const {
  std::vector<std::filesystem::path> out;
  for (const auto& d : list("log.dirs")) out.emplace_back(d);
  return out;
}

int BrokerConfig::reactor_threads() const {
  auto n = static_cast<int>(integer("num.network.threads"));
  if (n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::map<std::string, std::string> BrokerConfig::topic_defaults() const {
  std::map<std::string, std::string> out;
  for (const auto& def : topic_properties()) out[std::string(def.name)] = std::string(def.default_value);
  for (const auto& def : broker_properties()) {
    if (def.topic_name.empty()) continue;
    const std::string name(def.name);
    if (time_synonyms(name).empty()) {
      out[std::string(def.topic_name)] = raw(name);
    } else if (auto ms = time_in_ms(name, [&](std::string_view n) { return value(std::string(n)); })) {
      out[std::string(def.topic_name)] = std::to_string(*ms);
    }
  }
  return out;
}

namespace {

// listener name -> protocol name, from listener.security.protocol.map.
std::map<std::string, std::string> protocol_map(const BrokerConfig& cfg) {
  std::map<std::string, std::string> out;
  for (const auto& entry : cfg.list("listener.security.protocol.map")) {
    const auto colon = entry.find(':');
    if (colon == std::string::npos || colon == 0 || !parse_security_protocol(entry.substr(colon + 1)))
      throw ConfigError(fmt::format("listener.security.protocol.map: '{}' is not NAME:PROTOCOL with PROTOCOL one of "
                                    "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", entry));
    out[entry.substr(0, colon)] = entry.substr(colon + 1);
  }
  return out;
}

}  // namespace

SecurityProtocol BrokerConfig::security_protocol(const std::string& listener) const {
  const auto map = protocol_map(*this);
  auto it = map.find(listener);
  if (it == map.end())
    throw ConfigError(fmt::format("listener.security.protocol.map: listener '{}' has no security protocol", listener));
  return *parse_security_protocol(it->second);
}

std::string BrokerConfig::listener_setting(const std::string& listener, const std::string& name) const {
  auto it = values_.find("listener.name." + lower(listener) + "." + name);
  if (it != values_.end()) return it->second.first;
  it = values_.find(name);
  if (it != values_.end()) return it->second.first;
  const PropertyDef* def = find_broker_property("listener.name.x." + name);
  return def ? std::string(def->default_value) : std::string();
}

void BrokerConfig::validate() const {
  auto ls = listeners();
  if (ls.empty()) throw ConfigError("listeners: at least one listener is required");
  for (const auto& l : ls) security_protocol(l.listener);  // every listener has one
  for (const auto& [key, value] : values_) {
    if (!listener_scoped_suffix(key)) continue;
    const std::string rest = key.substr(std::string_view("listener.name.").size());
    // A broker-only node names the controller listener without listening on it: it
    // presents its credentials there.
    bool named = rest.starts_with(lower(raw("controller.listener.names")) + ".");
    for (const auto& l : ls) named = named || rest.starts_with(lower(l.listener) + ".");
    // The HTTP API's https listeners take their TLS settings under the name https.
    named = named || (rest.starts_with("https.") && raw("http.listeners").find("https://") != std::string::npos);
    if (!named) throw ConfigError(fmt::format("{}: no listener of that name", key));
  }
  auto adv = advertised_listeners();
  for (const auto& a : adv) {
    bool found = false;
    for (const auto& l : ls) found = found || l.listener == a.listener;
    if (!found) throw ConfigError(fmt::format("advertised.listeners: listener '{}' is not in listeners", a.listener));
  }
  if (const auto& inter = raw("inter.broker.listener.name"); !inter.empty()) {
    bool found = false;
    for (const auto& a : adv) found = found || a.listener == inter;
    if (!found) throw ConfigError(fmt::format("inter.broker.listener.name: '{}' is not an advertised listener", inter));
  }
  if (log_dirs().empty()) throw ConfigError("log.dirs: at least one directory is required");
  max_connections_per_ip_overrides();
}

std::map<std::string, int64_t> BrokerConfig::max_connections_per_ip_overrides() const {
  constexpr std::string_view key = "max.connections.per.ip.overrides";
  std::map<std::string, int64_t> out;
  const std::string& text = raw(std::string(key));
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    std::string entry = text.substr(start, comma - start);
    start = comma + 1;
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    const size_t colon = entry.rfind(':');
    int64_t count = -1;
    if (colon != std::string::npos && colon > 0) {
      const std::string digits = entry.substr(colon + 1);
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
      if (ec != std::errc{} || end != digits.data() + digits.size() || digits.empty()) count = -1;
    }
    if (count < 0 || count > INT32_MAX)
      throw ConfigError(fmt::format("{}: '{}' is not host:count with count from 0 to {}", key, entry, INT32_MAX));
    std::string host = entry.substr(0, colon);
    // An IPv6 address may be written in brackets, [::1]:5.
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    out[host] = count;
  }
  return out;
}

namespace {

std::string yaml_value_text(const std::string& key, const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  if (node.IsNull()) return "";
  if (node.IsSequence()) {
    std::string out;
    for (const auto& item : node) {
      if (!item.IsScalar()) throw ConfigError(fmt::format("{}: list entries must be plain values", key));
      if (!out.empty()) out += ',';
      out += item.Scalar();
    }
    return out;
  }
  throw ConfigError(fmt::format("{}: expected a value or a list, found a mapping", key));
}

}  // namespace

BrokerConfig load_broker_config(const std::optional<std::filesystem::path>& file,
                                const std::vector<std::string>& overrides) {
  BrokerConfig cfg;
  if (file) {
    YAML::Node root;
    try {
      root = YAML::LoadFile(file->string());
    } catch (const YAML::Exception& e) {
      throw ConfigError(fmt::format("{}: {}", file->string(), e.what()));
    }
    if (root && !root.IsNull()) {
      if (!root.IsMap()) throw ConfigError(fmt::format("{}: the top level must be a mapping of settings", file->string()));
      for (const auto& kv : root) {
        auto key = kv.first.as<std::string>();
        cfg.set(key, yaml_value_text(key, kv.second), ConfigSource::static_file);
      }
    }
  }
  for (const auto& o : overrides) {
    auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0) throw ConfigError(fmt::format("--override '{}' is not KEY=VALUE", o));
    cfg.set(o.substr(0, eq), o.substr(eq + 1), ConfigSource::override_flag);
  }
  cfg.validate();
  return cfg;
}

}  // namespace brokerd::config
