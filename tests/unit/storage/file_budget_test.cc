// The open-files budget split into shares: a shard frees its own idle files when its share is
// spent, another shard's files never starve it, and the margin bounds what all may hold.
#include "brokerd/storage/file_budget.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <exception>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using Handle = std::shared_ptr<const FileHandle>;

class FileBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_open_files_budget(8);  // margin: max(8 / 8, 8) = 8
    set_open_files_shares(2);
  }
  void TearDown() override {
    set_thread_evictor({});
    set_open_files_shares(1);
    set_open_files_budget(0);
  }
  Handle open_one() {
    return open_segment_file(dir_.path() / ("f" + std::to_string(next_++)), O_RDWR | O_CREAT, true);
  }
  // Opens on a thread of its own, as the owner of `share` (with no evictor).
  std::vector<Handle> open_on_share(int share, int n) {
    std::vector<Handle> out;
    std::exception_ptr error;
    std::thread([&] {
      set_thread_evictor({}, share);
      try {
        for (int i = 0; i < n; ++i) out.push_back(open_one());
      } catch (...) {
        error = std::current_exception();
      }
    }).join();
    if (error) std::rethrow_exception(error);
    return out;
  }
  testing::TempDir dir_;
  int next_ = 0;
};

TEST_F(FileBudgetTest, EachShareGetsItsPartAndCountsWhatItHolds) {
  EXPECT_EQ(open_files_share_limit(0), 4);
  EXPECT_EQ(open_files_share_limit(1), 4);
  auto a = open_on_share(0, 3);
  auto b = open_on_share(1, 2);
  EXPECT_EQ(open_files_in_use(0), 3);
  EXPECT_EQ(open_files_in_use(1), 2);
  EXPECT_EQ(open_files_in_use(), 5);
  a.clear();
  EXPECT_EQ(open_files_in_use(0), 0);
  EXPECT_EQ(open_files_in_use(), 2);
}

TEST_F(FileBudgetTest, ASpentShareAsksItsEvictorUntilItHasRoom) {
  std::vector<Handle> held;
  int asked = 0;
  set_thread_evictor(
      [&] {
        ++asked;
        if (held.empty()) return false;
        held.erase(held.begin());  // one idle file per round
        return true;
      },
      0);
  for (int i = 0; i < 4; ++i) held.push_back(open_one());
  EXPECT_EQ(asked, 0);
  held.push_back(open_one());
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(open_files_in_use(0), 4);
  EXPECT_FALSE(over_open_files_budget(0));
}

TEST_F(FileBudgetTest, AnotherShardsFilesNeverStarveAShareWithRoom) {
  // Share 1 holds its part and the whole margin (files it could not release at once).
  auto b = open_on_share(1, 4 + 8);
  EXPECT_TRUE(over_open_files_budget(1));
  EXPECT_FALSE(over_open_files_budget(0));  // only the shard past its part trims
  // Share 0 still opens its own part...
  auto a = open_on_share(0, 4);
  EXPECT_EQ(open_files_in_use(0), 4);
  // ...but past it the margin is spent, and with nothing to release the open fails.
  try {
    open_on_share(0, 1);
    FAIL() << "an open past the share and the margin succeeded";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EMFILE);
  }
  EXPECT_EQ(open_files_in_use(), 16);
  b.resize(4);  // share 1 gives the margin back
  EXPECT_FALSE(over_open_files_budget(1));
  EXPECT_EQ(open_on_share(0, 1).size(), 1u);  // from the margin again
}

TEST_F(FileBudgetTest, AThreadOwningEveryShardTakesFromTheWholeBudget) {
  set_thread_evictor([] { return false; });  // no share
  std::vector<Handle> held;
  for (int i = 0; i < 8 + 8; ++i) held.push_back(open_one());
  EXPECT_EQ(open_files_in_use(), 16);
  EXPECT_EQ(open_files_in_use(0) + open_files_in_use(1), 0);
  EXPECT_TRUE(over_open_files_budget(0));  // every shard trims while the node is over
  EXPECT_THROW(open_one(), std::system_error);
}

TEST_F(FileBudgetTest, NoBudgetMeansNoLimit) {
  set_open_files_budget(0);
  auto a = open_on_share(0, 40);
  EXPECT_EQ(open_files_in_use(0), 40);
  EXPECT_FALSE(over_open_files_budget(0));
}

TEST(DerivedLimits, ConnectionsTakeWhatPartitionsAndTheNodeLeave) {
  // 400: partitions 200 + margin 25, the node's own 25, connections 150.
  EXPECT_EQ(derived_max_connections(400, derived_open_files_budget(400)), 150);
  EXPECT_EQ(derived_max_connections(1048576, derived_open_files_budget(1048576)), 98304);
  // A smaller log.open.files.max leaves more to connections: 400 - (100 + 12) - 25.
  EXPECT_EQ(derived_max_connections(400, 100), 263);
  EXPECT_EQ(derived_max_connections(64, derived_open_files_budget(64)), 1);
  for (const int64_t limit : {80, 256, 400, 1024, 4096, 65536, 1048576}) {
    const int64_t partitions = derived_open_files_budget(limit);
    const int64_t connections = derived_max_connections(limit, partitions);
    EXPECT_LE(partitions + open_files_margin(partitions) + connections + 24, limit) << limit;
  }
}

}  // namespace
}  // namespace brokerd::storage
