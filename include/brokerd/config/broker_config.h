#pragma once
// The broker's configuration: the embedded defaults, then a YAML file, then --override
// KEY=VALUE flags. Every value is validated at load; the first problem stops the start.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "brokerd/common/security_protocol.h"

namespace brokerd::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Endpoint {
  std::string listener;  // PLAINTEXT
  std::string host;
  uint16_t port = 0;
};

// "NAME://host:port" (host may be empty or [v6]); throws ConfigError naming `key`.
Endpoint parse_endpoint(const std::string& key, const std::string& text);

enum class ConfigSource { default_value, static_file, override_flag };

class BrokerConfig {
 public:
  // Defaults only.
  BrokerConfig();

  // Sets one property from text, validating it; throws ConfigError with one clear line.
  void set(const std::string& key, const std::string& value, ConfigSource source);

  const std::string& raw(const std::string& key) const;  // validated, normalised text
  ConfigSource source(const std::string& key) const;
  // The value in force, or nullopt for a property without a default that was not given
  // (log.retention.ms) or a listener-scoped one not set.
  std::optional<std::string> value(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  bool boolean(const std::string& key) const;
  double ratio(const std::string& key) const;
  std::vector<std::string> list(const std::string& key) const;

  // Typed views of the settings most code needs.
  int32_t node_id() const { return static_cast<int32_t>(integer("node.id")); }
  std::vector<Endpoint> listeners() const;
  std::vector<Endpoint> advertised_listeners() const;  // falls back to listeners
  std::vector<std::filesystem::path> log_dirs() const;
  // max.connections.per.ip.overrides as host -> count (validate() checked its form).
  std::map<std::string, int64_t> max_connections_per_ip_overrides() const;
  int reactor_threads() const;  // num.network.threads, 0 -> hardware cores
  // The protocol listener.security.protocol.map gives `listener` (validate() checked it has one).
  SecurityProtocol security_protocol(const std::string& listener) const;
  // A listener-scoped setting: listener.name.<listener in lower case>.<name> when set, else
  // the node-wide `name` when there is one, else the setting's default.
  std::string listener_setting(const std::string& listener, const std::string& name) const;

  // Broker-level defaults of topic properties: topic name -> value ("retention.ms" -> "604800000"),
  // times from the first of their synonyms given (log.retention.ms, .minutes, .hours).
  std::map<std::string, std::string> topic_defaults() const;

  // Checks cross-property rules (listeners parse and have a security protocol we serve,
  // log.dirs non-empty); throws ConfigError.
  void validate() const;

 private:
  std::map<std::string, std::pair<std::string, ConfigSource>> values_;
};

// Loads defaults, then `file` (YAML, flat Kafka-style keys; lists as YAML sequences or
// comma-separated strings), then each "KEY=VALUE" override. Throws ConfigError.
BrokerConfig load_broker_config(const std::optional<std::filesystem::path>& file,
                                const std::vector<std::string>& overrides);

}  // namespace brokerd::config
