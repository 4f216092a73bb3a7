#include <gtest/gtest.h>

#include <fstream>

#include "brokerd/storage/offset_index.h"
#include "brokerd/storage/time_index.h"
#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using testing::TempDir;

TEST(OffsetIndex, Lookup) {
  TempDir dir;
  OffsetIndex idx(dir.path() / "a.index", 100, 1024, true);
  EXPECT_EQ(idx.lookup(150).position, 0u);  // empty
  ASSERT_TRUE(idx.append(110, 4000));
  ASSERT_TRUE(idx.append(120, 8000));
  ASSERT_TRUE(idx.append(130, 12000));
  EXPECT_FALSE(idx.append(130, 13000));  // offsets must increase
  EXPECT_EQ(idx.lookup(120).position, 8000u);       // exact
  EXPECT_EQ(idx.lookup(125).position, 8000u);       // between entries
  EXPECT_EQ(idx.lookup(125).offset, 120);
  EXPECT_EQ(idx.lookup(105).position, 0u);          // before first entry
  EXPECT_EQ(idx.lookup(105).offset, 100);
  EXPECT_EQ(idx.lookup(50).position, 0u);           // below the base
  EXPECT_EQ(idx.lookup(1'000'000).position, 12000u);  // after last
  idx.truncate_to(120);
  EXPECT_EQ(idx.entries(), 1u);
  EXPECT_EQ(idx.lookup(1000).position, 4000u);
}

TEST(OffsetIndex, FullAndTrimmedOnReopen) {
  TempDir dir;
  auto path = dir.path() / "b.index";
  {
    OffsetIndex idx(path, 0, 32, true);  // room for 4 entries
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(idx.append(i * 10, i * 100));
    EXPECT_TRUE(idx.full());
    EXPECT_FALSE(idx.append(50, 500));
    idx.make_read_only();
  }
  EXPECT_EQ(std::filesystem::file_size(path), 32u);
  OffsetIndex ro(path, 0, 1 << 20, false);
  EXPECT_EQ(ro.entries(), 4u);
  EXPECT_EQ(ro.lookup(25).position, 200u);
  EXPECT_TRUE(ro.sane(1000));
  EXPECT_FALSE(ro.sane(250));  // an entry points past a 250-byte segment
}

TEST(OffsetIndex, BigEndianLayout) {
  TempDir dir;
  auto path = dir.path() / "c.index";
  {
    OffsetIndex idx(path, 1000, 64, true);
    idx.append(1003, 0x01020304);
  }
  std::ifstream in(path, std::ios::binary);
  unsigned char e[8];
  in.read(reinterpret_cast<char*>(e), 8);
  EXPECT_EQ(e[3], 3);
  EXPECT_EQ(e[4], 1);
  EXPECT_EQ(e[7], 4);
}

TEST(TimeIndex, LookupBelowAndMonotonic) {
  TempDir dir;
  TimeIndex idx(dir.path() / "a.timeindex", 100, 1200, true);
  EXPECT_TRUE(idx.maybe_append(1000, 105));
  EXPECT_TRUE(idx.maybe_append(2000, 115));
  EXPECT_FALSE(idx.maybe_append(1500, 120));  // timestamps only increase
  EXPECT_TRUE(idx.maybe_append(3000, 125));
  EXPECT_EQ(idx.entries(), 3u);
  EXPECT_FALSE(idx.lookup_below(1000));  // nothing strictly below
  EXPECT_EQ(idx.lookup_below(1001)->offset, 105);
  EXPECT_EQ(idx.lookup_below(2500)->offset, 115);
  EXPECT_EQ(idx.lookup_below(99999)->timestamp, 3000);
  idx.truncate_to(115);
  EXPECT_EQ(idx.entries(), 1u);
  EXPECT_TRUE(idx.sane(106));
  EXPECT_FALSE(idx.sane(105));
}

}  // namespace
}  // namespace brokerd::storage
