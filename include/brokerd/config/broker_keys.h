#pragma once
// Kafka's broker config keys, and what a BROKER resource of AlterConfigs or
// IncrementalAlterConfigs does with each (src/config/broker_keys.cc holds the table):
//
//   applied         brokerd acts on the new value at once (topic defaults, throttle rates, ...)
//   stored_ignored  Kafka reconfigures it at runtime; brokerd has no such mechanism (Kerberos,
//                   per-listener TLS and SASL settings, thread pools, ...): the value is kept in
//                   the metadata log and described like Kafka's, and the node that takes it logs
//                   that it has no effect
//   read_only       Kafka needs a restart for it (broker.id, log.dirs, ...), and so do brokerd's
//                   own settings that are not Kafka's: refused with INVALID_REQUEST, "Cannot
//                   update these configs dynamically: Set(<names>)", as Kafka refuses them
//   unknown         not a broker key: stored and described as Kafka stores custom keys (its
//                   value hidden, as Kafka hides a key it cannot type), with no effect
//
// listener.name.<listener>.<key> overrides a key for one listener. Kafka takes every such
// name; the ones whose <key> it reconfigures per listener are stored_ignored here (brokerd
// reads its listener settings at start), the others unknown.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace brokerd::config {

enum class KeyTreatment { applied, stored_ignored, read_only, unknown };

// Where Kafka lets a dynamic key be set.
enum class KeyScope {
  cluster_wide,   // a broker's own resource or the cluster default ("")
  per_broker,     // a broker's own resource only ("Cannot update these configs at default cluster level")
  listener_only,  // only as listener.name.<listener>.<key>, on a broker's own resource (key stores)
};

// Kafka's ConfigType ids (DescribeConfigs' config_type): 0 when the type is not known.
enum class KafkaType : int8_t {
  unknown = 0, boolean = 1, string = 2, int32 = 3, int16 = 4, int64 = 5, float64 = 6, list = 7,
  class_name = 8, password = 9,
};

struct BrokerKey {
  std::string_view name;
  KeyTreatment treatment;
  KeyScope scope;
  KafkaType type;
  // Kafka's default, when it has one (a DEFAULT_CONFIG synonym); brokerd's own default wins
  // for the keys brokerd has.
  std::optional<std::string_view> kafka_default;
  // Kafka needs a restart for it, brokerd applies it at runtime (a difference kept).
  bool beyond_kafka = false;
  std::string_view note = {};
};

// Every key a broker resource may be altered with in Kafka (its dynamic keys and the broker
// quota rates), and the static Kafka keys brokerd applies at runtime.
std::span<const BrokerKey> dynamic_broker_keys();
// Kafka's broker keys that need a restart (KRaft mode), except those brokerd applies.
std::span<const std::string_view> static_broker_keys();

struct KeyClass {
  KeyTreatment treatment = KeyTreatment::unknown;
  const BrokerKey* row = nullptr;  // the table row of the key (of <key> in a listener form)
  std::string_view listener;       // the <listener> of listener.name.<listener>.<key>
  std::string_view base;           // <key> of a listener form; the name itself otherwise
};

// What a broker resource does with `name`.
KeyClass classify_broker_key(std::string_view name);

// Checks `value` against Kafka's type for the key (numbers, booleans); an error sentence or
// nullopt.
std::optional<std::string> check_kafka_type(std::string_view name, KafkaType type, std::string_view value);

}  // namespace brokerd::config
