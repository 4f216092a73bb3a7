#include "brokerd/controller/broker_registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/net/request.h"
#include "brokerd/quorum/quorum_driver.h"

namespace brokerd::controller {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int32_t kBroker = 2;

// A controller on a quorum of one with a registry whose session is 1.5 s and whose own
// heartbeat interval is 100 ms (a grace of 200 ms), and broker 2 registered and unfenced.
class BrokerRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("brokerd-registry-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    quorum::QuorumOptions o;
    o.node_id = 1;
    o.cluster_id = "cluster-x";
    o.voters = {{1, "", 0}};
    o.dir = dir_ / "__cluster_metadata-0";
    quorum_ = std::make_unique<quorum::QuorumDriver>(o, &store_);
    store_.attach(*quorum_);
    quorum_->start();
    const auto deadline = Clock::now() + 10s;
    ASSERT_TRUE(store_.wait_until_caught_up([&] { return Clock::now() > deadline; }));
    registry_ = std::make_unique<BrokerRegistry>(store_, *quorum_, 1500, 100);

    protocol::BrokerRegistrationRequest reg;
    reg.broker_id = kBroker;
    reg.cluster_id = "cluster-x";
    reg.incarnation_id.bytes[0] = 7;
    auto& l = reg.listeners.emplace_back();
    l.name = "PLAINTEXT";
    l.host = "127.0.0.1";
    l.port = 9093;
    auto answer = registry_->registration(reg);
    ASSERT_EQ(answer.error_code, 0);
    epoch_ = answer.broker_epoch;
    ASSERT_FALSE(heartbeat().is_fenced);
    registry_->start();
  }
  void TearDown() override {
    registry_.reset();
    quorum_->stop(0);
    fs::remove_all(dir_);
  }
  protocol::BrokerHeartbeatResponse heartbeat() {
    protocol::BrokerHeartbeatRequest hb;
    hb.broker_id = kBroker;
    hb.broker_epoch = epoch_;
    hb.current_metadata_offset = store_.image()->offset;
    return registry_->heartbeat(hb);
  }
  bool fenced() { return store_.image()->broker(kBroker)->fenced; }
  // How long after `from` the broker was fenced (at most `limit`, else -1).
  int64_t fenced_within(Clock::time_point from, std::chrono::milliseconds limit) {
    while (Clock::now() - from < limit) {
      if (fenced()) return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - from).count();
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

  fs::path dir_;
  metadata::MetadataStore store_{"cluster-x", 1};
  std::unique_ptr<quorum::QuorumDriver> quorum_;
  std::unique_ptr<BrokerRegistry> registry_;
  int64_t epoch_ = -1;
};

TEST_F(BrokerRegistryTest, AClosedHeartbeatConnectionLeavesTheGrace) {
  auto watch = registry_->watch_connection(kBroker);
  heartbeat();
  const auto closed = Clock::now();
  watch.reset();  // the connection that carried the heartbeats closes
  const int64_t after = fenced_within(closed, 1400ms);
  EXPECT_GE(after, 150);  // two of this controller's 100 ms intervals...
  EXPECT_LT(after, 700);  // ...not the 1.5 s session
}

TEST_F(BrokerRegistryTest, AHeartbeatAfterTheCloseKeepsTheSession) {
  auto watch = registry_->watch_connection(kBroker);
  watch.reset();
  std::this_thread::sleep_for(20ms);
  heartbeat();  // the broker reconnected
  EXPECT_EQ(fenced_within(Clock::now(), 600ms), -1);
}

TEST_F(BrokerRegistryTest, ABrokerWithALongerIntervalGetsTwoOfItsOwn) {
  // The broker heartbeats every 400 ms, four times this controller's setting.
  for (int i = 0; i < 2; ++i) {
    std::this_thread::sleep_for(400ms);
    heartbeat();
  }
  auto watch = registry_->watch_connection(kBroker);
  const auto closed = Clock::now();
  watch.reset();
  const int64_t after = fenced_within(closed, 1400ms);
  EXPECT_GE(after, 700);  // two of its 400 ms gaps
  EXPECT_LT(after, 1300);
}

}  // namespace
}  // namespace brokerd::controller
