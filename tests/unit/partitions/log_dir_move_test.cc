#include "brokerd/partitions/log_dir_move.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using namespace brokerd::partitions;

class LogDirMoveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("log-dir-move-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    a_ = root_ / "a";
    b_ = root_ / "b";
    fs::create_directories(a_);
    fs::create_directories(b_);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& p, const std::string& text, bool append = false) {
    std::ofstream(p, append ? std::ios::app : std::ios::trunc) << text;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  uint64_t round(CopiedFiles& copied, const std::vector<std::string>& always = {}) {
    return copy_round(a_ / "t-0", b_ / ("t-0" + std::string(kFutureSuffix)), list_partition_files(a_ / "t-0"), copied,
                      always);
  }
  fs::path future() const { return b_ / ("t-0" + std::string(kFutureSuffix)); }

  fs::path root_, a_, b_;
};

TEST_F(LogDirMoveTest, RoundsCopyOnlyWhatChanged) {
  fs::create_directories(a_ / "t-0");
  write(a_ / "t-0" / "0.log", "aaaa");
  write(a_ / "t-0" / "0.index", "ii");
  write(a_ / "t-0" / "0.log.cleaned", "half-written");  // a cleaner's work in progress
  CopiedFiles copied;
  EXPECT_EQ(round(copied), 6u);
  EXPECT_FALSE(fs::exists(future() / "0.log.cleaned"));
  EXPECT_EQ(round(copied), 0u);  // nothing changed
  // Appended records: only the new bytes.
  write(a_ / "t-0" / "0.log", "bb", true);
  EXPECT_EQ(round(copied), 2u);
  EXPECT_EQ(read(future() / "0.log"), "aaaabb");
  // A file replaced by another (a cleaner's swap): copied whole, even at the same size.
  fs::remove(a_ / "t-0" / "0.log");
  write(a_ / "t-0" / "0.log", "cccccc");
  EXPECT_EQ(round(copied), 6u);
  EXPECT_EQ(read(future() / "0.log"), "cccccc");
  // A cut log (a truncation): copied whole at its new size.
  fs::resize_file(a_ / "t-0" / "0.log", 3);
  round(copied);
  EXPECT_EQ(read(future() / "0.log"), "ccc");
  // A file rewritten in place at its size: seen by its modification time.
  write(a_ / "t-0" / "0.index", "jj");
  EXPECT_EQ(round(copied), 2u);
  EXPECT_EQ(read(future() / "0.index"), "jj");
  // A file written through a mapping may not show it yet: copied whenever named.
  EXPECT_EQ(round(copied), 0u);
  EXPECT_EQ(round(copied, {"0.index"}), 2u);
  // A deleted segment (retention) leaves the copy too.
  fs::remove(a_ / "t-0" / "0.index");
  round(copied);
  EXPECT_FALSE(fs::exists(future() / "0.index"));
}

TEST_F(LogDirMoveTest, CommitSwapsTheCopyIn) {
  fs::create_directories(a_ / "t-0");
  write(a_ / "t-0" / "0.log", "records");
  CopiedFiles copied;
  round(copied);
  commit_move(a_ / "t-0", future(), b_ / "t-0");
  EXPECT_EQ(read(b_ / "t-0" / "0.log"), "records");
  EXPECT_TRUE(fs::exists(b_ / ("t-0" + std::string(kCompleteSuffix))));
  EXPECT_FALSE(fs::exists(future()));
  EXPECT_TRUE(fs::exists(a_ / ("t-0" + std::string(kMovedSuffix))));
  // What a restart then finds: the committed move's leftover goes.
  EXPECT_EQ(recover_moves({a_, b_}).size(), 1u);
  EXPECT_FALSE(fs::exists(a_ / ("t-0" + std::string(kMovedSuffix))));
  EXPECT_TRUE(fs::exists(b_ / "t-0" / "0.log"));
}

TEST_F(LogDirMoveTest, RecoveryDropsAnUncommittedCopy) {
  fs::create_directories(a_ / "t-0");
  write(a_ / "t-0" / "0.log", "records");
  CopiedFiles copied;
  round(copied);
  recover_moves({a_, b_});
  EXPECT_FALSE(fs::exists(future()));
  EXPECT_EQ(read(a_ / "t-0" / "0.log"), "records");
}

TEST_F(LogDirMoveTest, RecoveryFinishesAMoveStoppedBetweenTheRenames) {
  fs::create_directories(a_ / "t-0");
  write(a_ / "t-0" / "0.log", "records");
  CopiedFiles copied;
  round(copied);
  write(b_ / ("t-0" + std::string(kCompleteSuffix)), "");              // step 0
  fs::rename(a_ / "t-0", a_ / ("t-0" + std::string(kMovedSuffix)));  // step 1
  recover_moves({a_, b_});
  EXPECT_EQ(read(b_ / "t-0" / "0.log"), "records");
  EXPECT_FALSE(fs::exists(a_ / ("t-0" + std::string(kMovedSuffix))));
  EXPECT_FALSE(fs::exists(a_ / "t-0"));
  EXPECT_FALSE(fs::exists(future()));
  EXPECT_FALSE(fs::exists(b_ / ("t-0" + std::string(kCompleteSuffix))));
}

TEST_F(LogDirMoveTest, RecoveryNeverFinishesFromACopyNotMarkedWhole) {
  fs::create_directories(a_ / "t-0");
  write(a_ / "t-0" / "0.log", "records");
  CopiedFiles copied;
  round(copied);
  write(a_ / "t-0" / "0.log", "more", true);  // written after the copy, before a failed step 2
  fs::rename(a_ / "t-0", a_ / ("t-0" + std::string(kMovedSuffix)));
  recover_moves({a_, b_});
  EXPECT_EQ(read(a_ / "t-0" / "0.log"), "recordsmore");
  EXPECT_FALSE(fs::exists(future()));
}

TEST_F(LogDirMoveTest, RecoveryRestoresAMovedDirectoryWithoutCopy) {
  fs::create_directories(a_ / ("t-0" + std::string(kMovedSuffix)));
  write(a_ / ("t-0" + std::string(kMovedSuffix)) / "0.log", "records");
  recover_moves({a_, b_});
  EXPECT_EQ(read(a_ / "t-0" / "0.log"), "records");
}

}  // namespace
