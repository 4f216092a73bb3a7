// Dynamic broker configs: which layer wins, and which properties may change at runtime.
#include "brokerd/config/dynamic_configs.h"

#include <gtest/gtest.h>

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

TEST(DynamicConfigs, OnlyPropertiesThatChangeAtRuntimeAreAccepted) {
  std::string out;
  EXPECT_FALSE(check_dynamic("log.cleanup.policy", "compact, delete", &out));
  EXPECT_EQ(out, "compact,delete");
  EXPECT_FALSE(check_dynamic("follower.replication.throttled.rate", "1048576", &out));
  EXPECT_FALSE(check_dynamic("num.partitions", "6", &out));
  auto restart = check_dynamic("num.network.threads", "4", &out);
  ASSERT_TRUE(restart);
  EXPECT_NE(restart->find("Cannot update these configs dynamically"), std::string::npos) << *restart;
  auto unknown = check_dynamic("no.such.config", "1", &out);
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->find("Unknown broker config name"), std::string::npos) << *unknown;
  EXPECT_TRUE(check_dynamic("log.retention.ms", "soon", &out));
  EXPECT_TRUE(check_dynamic("num.partitions", "0", &out)) << "below the property's bound";
}
