#include "brokerd/storage/log_manager.h"

#include <gtest/gtest.h>

#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using testing::make_batch;
using testing::TempDir;
namespace fs = std::filesystem;

TEST(LogManager, ParsesPartitionDirs) {
  auto p = LogManager::parse_partition_dir("my-topic-12");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->first, "my-topic");
  EXPECT_EQ(p->second, 12);
  EXPECT_FALSE(LogManager::parse_partition_dir("nodash"));
  EXPECT_FALSE(LogManager::parse_partition_dir("topic-x"));
  EXPECT_FALSE(LogManager::parse_partition_dir("topic-"));
}

TEST(LogManager, CreateReopenAndRemove) {
  TempDir a, b;
  auto cfg_for = [](const std::string&) { return LogConfig{}; };
  {
    LogManager m({a.path(), b.path()}, cfg_for);
    Log* l0 = m.create("orders", 0, LogConfig{});
    Log* l1 = m.create("orders", 1, LogConfig{});
    ASSERT_TRUE(l0 && l1);
    EXPECT_NE(l0->dir().parent_path(), l1->dir().parent_path());  // spread over dirs
    EXPECT_EQ(m.create("orders", 0, LogConfig{}), l0);
    Bytes batch = make_batch(3);
    EXPECT_EQ(l1->append(batch, 0, 1).error, ErrorCode::none);
    m.close_all();
    EXPECT_TRUE(fs::exists(a.path() / LogManager::kCleanShutdownFile));
  }
  {
    LogManager m({a.path(), b.path()}, cfg_for);
    EXPECT_FALSE(fs::exists(a.path() / LogManager::kCleanShutdownFile));
    EXPECT_EQ(m.size(), 2u);
    Log* l1 = m.get("orders", 1);
    ASSERT_TRUE(l1);
    EXPECT_EQ(l1->log_end_offset(), 3);
    fs::path dir = l1->dir();
    EXPECT_TRUE(m.remove("orders", 1));
    EXPECT_FALSE(m.get("orders", 1));
    EXPECT_FALSE(fs::exists(dir));
    int n = 0;
    m.for_each([&](const std::string& t, int32_t p, Log&) {
      EXPECT_EQ(t, "orders");
      EXPECT_EQ(p, 0);
      ++n;
    });
    EXPECT_EQ(n, 1);
  }
}

}  // namespace
}  // namespace brokerd::storage
