// The table of Kafka's broker keys: each key in one class, in line with brokerd's own
// properties, listener forms classed by the key they override.
#include "brokerd/config/broker_keys.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "brokerd/config/properties.h"

using namespace brokerd::config;

TEST(BrokerKeys, EveryKeyIsInOnePlace) {
  std::set<std::string_view> seen;
  for (const auto& k : dynamic_broker_keys()) EXPECT_TRUE(seen.insert(k.name).second) << k.name << " twice";
  for (auto name : static_broker_keys()) EXPECT_TRUE(seen.insert(name).second) << name << " both dynamic and static";
  EXPECT_GT(static_broker_keys().size(), 200u);
}

TEST(BrokerKeys, AppliedKeysAreExactlyBrokerdsRuntimeProperties) {
  for (const auto& def : broker_properties()) {
    const KeyClass key = classify_broker_key(def.name);
    if (!def.read_only) {
      EXPECT_TRUE(key.treatment == KeyTreatment::applied || key.treatment == KeyTreatment::stored_ignored) << def.name;
    } else {
      EXPECT_NE(key.treatment, KeyTreatment::applied) << def.name << " is applied but brokerd reads it at start";
      EXPECT_NE(key.treatment, KeyTreatment::unknown) << def.name << " is brokerd's: never a custom key";
    }
  }
  for (const auto& k : dynamic_broker_keys()) {
    if (k.treatment != KeyTreatment::applied) continue;
    const PropertyDef* def = find_broker_property(k.name);
    ASSERT_NE(def, nullptr) << k.name;
    EXPECT_FALSE(def->read_only) << k.name;
  }
}

TEST(BrokerKeys, ClassesFollowKafka) {
  EXPECT_EQ(classify_broker_key("log.retention.ms").treatment, KeyTreatment::applied);
  EXPECT_EQ(classify_broker_key("sasl.kerberos.min.time.before.relogin").treatment, KeyTreatment::stored_ignored);
  EXPECT_EQ(classify_broker_key("broker.id").treatment, KeyTreatment::read_only);
  EXPECT_EQ(classify_broker_key("log.dirs").treatment, KeyTreatment::read_only);
  EXPECT_EQ(classify_broker_key("log.retention.hours").treatment, KeyTreatment::read_only) << "static in Kafka";
  EXPECT_EQ(classify_broker_key("cleanup.policy").treatment, KeyTreatment::unknown) << "a topic key: custom on a broker";
  EXPECT_EQ(classify_broker_key("no.such.config").treatment, KeyTreatment::unknown);
  const auto* num_partitions = classify_broker_key("num.partitions").row;
  ASSERT_NE(num_partitions, nullptr);
  EXPECT_TRUE(num_partitions->beyond_kafka);
}

TEST(BrokerKeys, ListenerFormsAreClassedByTheKeyTheyOverride) {
  auto tls = classify_broker_key("listener.name.sasl_ssl.ssl.keystore.location");
  EXPECT_EQ(tls.treatment, KeyTreatment::stored_ignored);
  EXPECT_EQ(tls.listener, "sasl_ssl");
  EXPECT_EQ(tls.base, "ssl.keystore.location");
  ASSERT_NE(tls.row, nullptr);
  EXPECT_EQ(tls.row->scope, KeyScope::listener_only);
  auto jaas = classify_broker_key("listener.name.sasl_plaintext.plain.sasl.jaas.config");
  EXPECT_EQ(jaas.treatment, KeyTreatment::stored_ignored);
  ASSERT_NE(jaas.row, nullptr);
  EXPECT_EQ(jaas.row->name, "sasl.jaas.config");
  EXPECT_EQ(classify_broker_key("listener.name.plaintext.sasl.kerberos.min.time.before.relogin").treatment,
            KeyTreatment::stored_ignored);
  EXPECT_EQ(classify_broker_key("listener.name.plaintext.max.connections").treatment, KeyTreatment::stored_ignored);
  // Kafka takes any listener form; one of a key it does not reconfigure per listener is a custom key.
  auto other = classify_broker_key("listener.name.plaintext.broker.id");
  EXPECT_EQ(other.treatment, KeyTreatment::unknown);
  EXPECT_EQ(other.row, nullptr);
}

TEST(BrokerKeys, ValuesAreCheckedAgainstKafkasTypes) {
  EXPECT_FALSE(check_kafka_type("k", KafkaType::int64, "58000"));
  EXPECT_TRUE(check_kafka_type("k", KafkaType::int64, "soon"));
  EXPECT_TRUE(check_kafka_type("k", KafkaType::int16, "70000"));
  EXPECT_FALSE(check_kafka_type("k", KafkaType::float64, "0.8"));
  EXPECT_TRUE(check_kafka_type("k", KafkaType::float64, "high"));
  EXPECT_FALSE(check_kafka_type("k", KafkaType::boolean, "TRUE"));
  EXPECT_TRUE(check_kafka_type("k", KafkaType::boolean, "yes"));
  EXPECT_FALSE(check_kafka_type("k", KafkaType::list, "anything,at,all"));
}
