#include "brokerd/quorum/voters.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace brokerd::quorum {
namespace {

TEST(Voters, ParsesKafkasForm) {
  auto v = parse_voters("1@localhost:9093, 2@10.0.0.2:9093,3@[::1]:19093");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], (Voter{1, "localhost", 9093}));
  EXPECT_EQ(v[1], (Voter{2, "10.0.0.2", 9093}));
  EXPECT_EQ(v[2], (Voter{3, "::1", 19093}));
  EXPECT_TRUE(parse_voters("").empty());
}

TEST(Voters, RefusesWhatCannotWork) {
  for (const char* bad : {"1@host", "x@host:1", "1:host@2", "1@host:0", "1@host:70000", "1@:9093", "-1@h:1"}) {
    EXPECT_THROW(parse_voters(bad), std::invalid_argument) << bad;
  }
  try {
    parse_voters("1@a:1,1@b:2");
    FAIL() << "a duplicate id was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("listed twice"), std::string::npos);
  }
}

}  // namespace
}  // namespace brokerd::quorum
