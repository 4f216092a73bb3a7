// KIP-392's rack-aware choice of the replica a consumer reads from.
#include "brokerd/replication/read_replica.h"

#include <gtest/gtest.h>

#include <vector>

namespace brokerd::replication {
namespace {

TEST(ReadReplica, TheLeaderWhenTheConsumerNamesNoRackOrSharesTheLeaders) {
  std::vector<ReadCandidate> f{{2, 10, "b"}};
  EXPECT_EQ(choose_read_replica("", 1, "a", f), 1);
  EXPECT_EQ(choose_read_replica("a", 1, "a", f), 1);
}

TEST(ReadReplica, AFollowerInTheConsumersRackFurthestAhead) {
  std::vector<ReadCandidate> f{{2, 10, "b"}, {3, 12, "b"}, {4, 20, "c"}};
  EXPECT_EQ(choose_read_replica("b", 1, "a", f), 3);
  EXPECT_EQ(choose_read_replica("c", 1, "a", f), 4);
  f[0].log_end = 12;
  EXPECT_EQ(choose_read_replica("b", 1, "a", f), 2) << "the lowest id among equals";
}

TEST(ReadReplica, TheLeaderWhenNoFollowerSharesTheRack) {
  std::vector<ReadCandidate> f{{2, 10, "b"}, {3, 10, ""}};
  EXPECT_EQ(choose_read_replica("z", 1, "a", f), 1);
  EXPECT_EQ(choose_read_replica("z", 1, "a", {}), 1);
}

}  // namespace
}  // namespace brokerd::replication
