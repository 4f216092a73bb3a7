// PartitionManager::reconcile applies a large metadata change in slices: the shard serves other
// work between them, and the caller resumes only once every partition is in place.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <filesystem>
#include <future>

#include "brokerd/metadata/metadata_image.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/reactor_pool.h"

namespace {

namespace fs = std::filesystem;
using namespace brokerd;
using namespace brokerd::partitions;

// An image of `topics` one-partition topics, every replica on node 1.
std::shared_ptr<const metadata::MetadataImage> image_of(int topics, int64_t offset) {
  auto image = std::make_shared<metadata::MetadataImage>();
  for (int i = 0; i < topics; ++i) {
    auto t = std::make_shared<metadata::TopicMetadata>();
    t->name = "t" + std::to_string(i);
    t->id.bytes[0] = static_cast<uint8_t>(i);
    t->id.bytes[1] = static_cast<uint8_t>(i >> 8);
    t->id.bytes[15] = 7;
    metadata::PartitionAssignment a;
    a.replicas = a.isr = {1};
    a.leader = 1;
    t->partitions.push_back(a);
    image->put_topic(std::move(t));
  }
  image->offset = offset;
  image->seal();
  return image;
}

class ReconcileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reconcile-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReconcileTest, ManyNewPartitionsLeaveTheShardFreeBetweenSlicesAndAllExistWhenItReturns) {
  constexpr int kTopics = 1500;
  net::ReactorPool reactors(1);
  net::BlockingPool blocking(1);
  config::BrokerConfig cfg;
  PartitionManager::Options options;
  options.node_id = 1;
  options.log_dirs = {dir_};
  options.topic_defaults = cfg.topic_defaults();
  PartitionManager partitions(reactors, blocking, options);
  partitions.load(image_of(0, 0));
  reactors.start();

  auto done = boost::asio::co_spawn(reactors.executor(0), partitions.reconcile(image_of(kTopics, 1)),
                                    boost::asio::use_future);
  // A job on the shard that looks again each turn until the first partitions exist: it runs
  // between two slices, while others are still missing.
  std::promise<int> hosted_then;
  std::function<void(int)> look = [&](int turns) {
    int n = 0;
    for (int i = 0; i < kTopics; ++i) n += partitions.local(TopicPartition{"t" + std::to_string(i), 0}) ? 1 : 0;
    if (n > 0 || turns > 1000000) return hosted_then.set_value(n);
    boost::asio::post(reactors.executor(0), [&look, turns] { look(turns + 1); });
  };
  boost::asio::post(reactors.executor(0), [&look] { look(0); });
  const int seen = hosted_then.get_future().get();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  done.get();
  EXPECT_LT(seen, kTopics) << "the whole change ran in one turn of the reactor";

  std::promise<int> hosted_after;
  boost::asio::post(reactors.executor(0), [&] {
    int n = 0;
    for (int i = 0; i < kTopics; ++i) n += partitions.local(TopicPartition{"t" + std::to_string(i), 0}) ? 1 : 0;
    hosted_after.set_value(n);
  });
  EXPECT_EQ(hosted_after.get_future().get(), kTopics);

  // An older image handed over later changes nothing.
  auto older = boost::asio::co_spawn(reactors.executor(0), partitions.reconcile(image_of(0, 0)), boost::asio::use_future);
  older.get();
  std::promise<bool> still;
  boost::asio::post(reactors.executor(0), [&] { still.set_value(partitions.local(TopicPartition{"t0", 0}) != nullptr); });
  EXPECT_TRUE(still.get_future().get());

  partitions.stop();
  reactors.drain(std::chrono::seconds(5));
  partitions.shutdown();
  blocking.join();
}

}  // namespace
