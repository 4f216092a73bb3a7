// Dynamic broker configs: which layer wins, and which properties may change at runtime.
#include "brokerd/config/dynamic_configs.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "brokerd/config/broker_config.h"

using namespace brokerd::config;

TEST(DynamicConfigs, ABrokersOwnValueWinsOverTheClusterDefaultOverTheStaticOne) {
  auto statics = load_broker_config(std::nullopt, {"log.retention.ms=1000", "node.id=2"});
  DynamicConfigs all;
  EXPECT_EQ(effective_value(statics, all, 2, "log.retention.ms"), "1000");
  all[""]["log.retention.ms"] = "2000";
  EXPECT_EQ(effective_value(statics, all, 2, "log.retention.ms"), "2000");
  auto v = dynamic_value(all, 2, "log.retention.ms");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->layer, DynamicLayer::cluster_default);
  all["3"]["log.retention.ms"] = "3000";  // another broker's own
  EXPECT_EQ(effective_value(statics, all, 2, "log.retention.ms"), "2000");
  all["2"]["log.retention.ms"] = "4000";
  EXPECT_EQ(effective_value(statics, all, 2, "log.retention.ms"), "4000");
  EXPECT_EQ(dynamic_value(all, 2, "log.retention.ms")->layer, DynamicLayer::per_broker);
  EXPECT_FALSE(dynamic_value(all, 2, "num.partitions"));
}

TEST(DynamicConfigs, KeysAreJudgedAsKafkaJudgesThem) {
  using Map = std::map<std::string, std::string>;
  auto why = [](Map configs, bool cluster_default = false) { return check_dynamic(configs, cluster_default, nullptr); };
  Map out;
  EXPECT_FALSE(check_dynamic({{"log.cleanup.policy", "compact, delete"}}, false, &out));
  EXPECT_EQ(out.at("log.cleanup.policy"), "compact,delete");
  EXPECT_FALSE(why({{"follower.replication.throttled.rate", "1048576"}}));
  EXPECT_FALSE(why({{"num.partitions", "6"}}));
  // Kafka stores keys it does not know, and keys it reconfigures that brokerd does not act on.
  EXPECT_FALSE(why({{"cleanup.policy", "compact"}}));
  EXPECT_FALSE(why({{"sasl.kerberos.min.time.before.relogin", "58000"}}));
  EXPECT_FALSE(why({{"listener.name.plaintext.ssl.keystore.location", "/k.pem"}}));
  EXPECT_FALSE(why({{"num.io.threads", "16"}}));

  auto restart = why({{"broker.id", "5"}, {"log.dirs", "/elsewhere"}, {"num.partitions", "2"}});
  ASSERT_TRUE(restart);
  EXPECT_EQ(*restart, "Cannot update these configs dynamically: Set(broker.id, log.dirs)");
  EXPECT_TRUE(why({{"metrics.listener", "127.0.0.1:1"}})) << "brokerd's own settings read at start";
  EXPECT_TRUE(why({{"listeners", "PLAINTEXT://:9093"}})) << "Kafka in KRaft mode refuses new listeners";

  auto stores = why({{"ssl.keystore.location", "/k.pem"}});
  ASSERT_TRUE(stores);
  EXPECT_NE(stores->find("only per-listener using the listener prefix: Set(ssl.keystore.location)"), std::string::npos);

  auto cluster = why({{"sasl.kerberos.min.time.before.relogin", "58000"}, {"listener.name.x.ssl.keystore.location", "/k"},
                      {"listener.name.x.max.connections", "5"}, {"log.retention.ms", "1"}},
                     true);
  ASSERT_TRUE(cluster);
  EXPECT_EQ(*cluster, "Cannot update these configs at default cluster level, broker id must be specified: "
                      "Set(listener.name.x.ssl.keystore.location, sasl.kerberos.min.time.before.relogin)");

  EXPECT_TRUE(why({{"log.retention.ms", "soon"}}));
  EXPECT_TRUE(why({{"num.partitions", "0"}})) << "below the property's bound";
  auto typed = why({{"sasl.kerberos.min.time.before.relogin", "soon"}});
  ASSERT_TRUE(typed);
  EXPECT_NE(typed->find("Not a number of type LONG"), std::string::npos) << *typed;
  EXPECT_FALSE(why({{"cleanup.policy", "anything at all"}})) << "a custom key has no type to check";
}
