// Kafka's offset checkpoint format: what is written reads back, and a damaged file is told
// apart from an absent one.
#include "brokerd/storage/offset_checkpoint.h"

#include <gtest/gtest.h>

#include <fstream>

#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

TEST(OffsetCheckpoint, FormatIsKafkas) {
  std::vector<OffsetCheckpointEntry> e{{"orders", 0, 42}, {"__consumer_offsets", 17, 0}};
  EXPECT_EQ(format_offset_checkpoint(e), "0\n2\norders 0 42\n__consumer_offsets 17 0\n");
  EXPECT_EQ(format_offset_checkpoint({}), "0\n0\n");
}

TEST(OffsetCheckpoint, ParsesWhatItFormats) {
  std::vector<OffsetCheckpointEntry> e{{"a.b-c_d", 3, 9'000'000'000}, {"x", 0, 0}};
  auto back = parse_offset_checkpoint(format_offset_checkpoint(e));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, e);
}

TEST(OffsetCheckpoint, RefusesDamagedText) {
  EXPECT_FALSE(parse_offset_checkpoint(""));
  EXPECT_FALSE(parse_offset_checkpoint("1\n0\n"));                // unknown version
  EXPECT_FALSE(parse_offset_checkpoint("0\n2\nt 0 1\n"));         // a line missing
  EXPECT_FALSE(parse_offset_checkpoint("0\n1\nt 0 1\nt 1 2\n"));  // a line too many
  EXPECT_FALSE(parse_offset_checkpoint("0\n1\nt 0\n"));           // a field missing
  EXPECT_FALSE(parse_offset_checkpoint("0\n1\nt x 1\n"));         // not a number
  EXPECT_FALSE(parse_offset_checkpoint("0\n1\nt 0 1 2\n"));       // a field too many
}

TEST(OffsetCheckpoint, WritesAndReadsAFile) {
  testing::TempDir dir;
  auto path = dir.path() / kReplicationOffsetCheckpointFile;
  EXPECT_FALSE(read_offset_checkpoint(path));  // absent
  std::vector<OffsetCheckpointEntry> e{{"t", 1, 5}};
  ASSERT_TRUE(write_offset_checkpoint(path, e));
  EXPECT_EQ(*read_offset_checkpoint(path), e);
  e.push_back({"u", 0, 7});
  ASSERT_TRUE(write_offset_checkpoint(path, e));  // replaces
  EXPECT_EQ(*read_offset_checkpoint(path), e);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  std::ofstream(path, std::ios::trunc) << "0\n3\nt 1 5\n";
  EXPECT_THROW(read_offset_checkpoint(path), std::runtime_error);
}

}  // namespace
}  // namespace brokerd::storage
