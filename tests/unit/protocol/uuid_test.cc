#include "brokerd/protocol/uuid.h"

#include <gtest/gtest.h>

#include <set>

namespace brokerd::protocol {
namespace {

TEST(Uuid, TextFormIsUrlSafeBase64) {
  EXPECT_EQ(Uuid::zero().to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
  Uuid one;
  one.bytes[15] = 1;
  EXPECT_EQ(one.to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
  Uuid all;
  all.bytes.fill(0xff);
  EXPECT_EQ(all.to_string(), "_____________________w");
  EXPECT_EQ(Uuid::from_string("_____________________w"), all);
  EXPECT_EQ(Uuid::from_string("AAAAAAAAAAAAAAAAAAAAAQ"), one);
  EXPECT_EQ(Uuid::from_string("short"), std::nullopt);
  EXPECT_EQ(Uuid::from_string("AAAAAAAAAAAAAAAAAAAAA*"), std::nullopt);
  EXPECT_EQ(Uuid::from_string("AAAAAAAAAAAAAAAAAAAAAB"), std::nullopt);  // padding bits set
}

TEST(Uuid, RandomIdsAreDistinctAndValid) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    Uuid u = Uuid::random();
    EXPECT_FALSE(u.is_zero());
    std::string s = u.to_string();
    EXPECT_NE(s[0], '-');
    EXPECT_EQ(Uuid::from_string(s), u);
    EXPECT_EQ(u.bytes[6] >> 4, 4);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace brokerd::protocol
