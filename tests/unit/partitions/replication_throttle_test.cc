// The replication throttle: which replicas a topic's list names, and the rate.
#include "brokerd/partitions/replication_throttle.h"

#include <gtest/gtest.h>

#include "brokerd/config/properties.h"

namespace {

using namespace brokerd::partitions;

TEST(ReplicationThrottle, ListsNamePartitionsOnBrokers) {
  EXPECT_TRUE(throttles("*", 7, 3));
  EXPECT_TRUE(throttles("0:1,1:2", 1, 2));
  EXPECT_TRUE(throttles("0:1, 1:2", 0, 1));
  EXPECT_FALSE(throttles("0:1,1:2", 1, 1));
  EXPECT_FALSE(throttles("", 0, 1));
  EXPECT_FALSE(throttles("10:1", 1, 1));
}

TEST(ReplicationThrottle, TopicConfigsTakeKafkasForm) {
  const auto* def = brokerd::config::find_topic_property("follower.replication.throttled.replicas");
  ASSERT_NE(def, nullptr);
  std::string out;
  EXPECT_FALSE(brokerd::config::validate_value(*def, "0:1,1:2", &out));
  EXPECT_FALSE(brokerd::config::validate_value(*def, "*", &out));
  EXPECT_FALSE(brokerd::config::validate_value(*def, "", &out));
  EXPECT_TRUE(brokerd::config::validate_value(*def, "0-1", &out));
  EXPECT_TRUE(brokerd::config::validate_value(*def, "a:b", &out));
  EXPECT_TRUE(brokerd::config::validate_value(*def, "0:", &out));
}

TEST(ReplicationThrottle, ARateLetsOneSecondsWorthThroughThenWaits) {
  ReplicationQuota q(1000);
  EXPECT_FALSE(q.exceeded(0));
  q.record(600, 0);
  EXPECT_FALSE(q.exceeded(0));
  q.record(600, 0);
  EXPECT_TRUE(q.exceeded(0)) << "1,200 bytes of a 1,000 byte bucket";
  EXPECT_TRUE(q.exceeded(100));
  EXPECT_FALSE(q.exceeded(300)) << "refilled 300 bytes after 300 ms";
  q.record(10'000, 300);
  EXPECT_TRUE(q.exceeded(5'000));
  EXPECT_FALSE(q.exceeded(11'000));
  ReplicationQuota unlimited(INT64_MAX);
  unlimited.record(UINT32_MAX, 0);
  EXPECT_FALSE(unlimited.exceeded(0));
}

// A dynamic broker config changes the rate of a running node.
TEST(ReplicationThrottle, ARateChangesAtRuntime) {
  ReplicationQuota q(INT64_MAX);
  q.set_rate(1000);
  EXPECT_FALSE(q.unlimited());
  q.record(1500, 0);
  EXPECT_TRUE(q.exceeded(0)) << "the bucket holds at most one second of the new rate";
  EXPECT_FALSE(q.exceeded(600));
  q.set_rate(INT64_MAX);
  EXPECT_TRUE(q.unlimited());
  q.record(UINT32_MAX, 700);
  EXPECT_FALSE(q.exceeded(700));
}

}  // namespace
