// Kafka's broker key synonyms, and topic defaults taken from the first one given.
#include "brokerd/config/config_synonyms.h"

#include <gtest/gtest.h>

#include <map>

#include "brokerd/config/broker_config.h"

using namespace brokerd::config;

TEST(ConfigSynonyms, TimeKeysListTheirUnitsInKafkasOrder) {
  using V = std::vector<std::string>;
  EXPECT_EQ(broker_synonyms("log.retention.hours"), (V{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}));
  EXPECT_EQ(broker_synonyms("log.roll.ms"), (V{"log.roll.ms", "log.roll.hours"}));
  EXPECT_EQ(broker_synonyms("log.roll.jitter.hours"), (V{"log.roll.jitter.ms", "log.roll.jitter.hours"}));
  EXPECT_EQ(broker_synonyms("log.flush.interval.ms"), (V{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}));
  EXPECT_EQ(broker_synonyms("log.segment.bytes"), (V{"log.segment.bytes"}));
  EXPECT_EQ(broker_synonyms("listener.name.external.ssl.keystore.location"),
            (V{"listener.name.external.ssl.keystore.location", "ssl.keystore.location"}));
  EXPECT_EQ(broker_synonyms("listener.name.sasl_ssl.plain.sasl.jaas.config"),
            (V{"listener.name.sasl_ssl.plain.sasl.jaas.config", "sasl.jaas.config"}));
}

TEST(ConfigSynonyms, TheFirstGivenUnitDecides) {
  std::map<std::string_view, std::string> given{{"log.retention.hours", "168"}};
  auto of = [&](std::string_view n) -> std::optional<std::string> {
    auto it = given.find(n);
    return it == given.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  EXPECT_EQ(time_in_ms("log.retention.ms", of), 604800000);
  given["log.retention.minutes"] = "30";
  EXPECT_EQ(time_in_ms("log.retention.ms", of), 1800000);
  given["log.retention.ms"] = "5000";
  EXPECT_EQ(time_in_ms("log.retention.ms", of), 5000);
  given["log.retention.ms"] = "-1";
  EXPECT_EQ(time_in_ms("log.retention.ms", of), -1);
  given = {{"log.retention.hours", "-1"}};
  EXPECT_EQ(time_in_ms("log.retention.ms", of), -1) << "a negative retention keeps forever";
}

TEST(ConfigSynonyms, TopicDefaultsComeFromTheHoursUnlessMillisecondsAreGiven) {
  auto defaults = load_broker_config(std::nullopt, {}).topic_defaults();
  EXPECT_EQ(defaults.at("retention.ms"), "604800000");
  EXPECT_EQ(defaults.at("segment.ms"), "604800000");
  EXPECT_EQ(defaults.at("segment.jitter.ms"), "0");
  auto cfg = load_broker_config(std::nullopt, {"log.retention.hours=24", "log.roll.hours=2", "log.roll.jitter.ms=5"});
  EXPECT_FALSE(cfg.value("log.retention.ms")) << "no default of its own";
  defaults = cfg.topic_defaults();
  EXPECT_EQ(defaults.at("retention.ms"), "86400000");
  EXPECT_EQ(defaults.at("segment.ms"), "7200000");
  EXPECT_EQ(defaults.at("segment.jitter.ms"), "5");
  defaults = load_broker_config(std::nullopt, {"log.retention.hours=24", "log.retention.ms=1000"}).topic_defaults();
  EXPECT_EQ(defaults.at("retention.ms"), "1000");
}
