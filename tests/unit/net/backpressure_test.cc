#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "server_fixture.h"

namespace brokerd::net::test {
namespace {

using boost::asio::awaitable;

// Tiny limits: every connection keeps hitting its own limits and the node-wide one, yet all
// requests complete, in order, and the limits hold.
TEST_F(ServerFixture, BackPressureWithTinyLimitsCompletesEverything) {
  ServerConfig config;
  config.max_inflight_requests_per_connection = 2;
  config.max_inflight_bytes_per_connection = 1500;
  config.queued_max_request_bytes = 2500;
  std::mutex mu;
  std::map<uint64_t, int> inflight;  // per connection, dispatches not yet completed
  int max_inflight = 0;
  std::atomic<int64_t> max_queued{0};
  Server* srv = nullptr;
  start([&](Request req) -> awaitable<Response> {
    const uint64_t conn = req.connection->id;
    {
      std::lock_guard lock(mu);
      max_inflight = std::max(max_inflight, ++inflight[conn]);
      int64_t q = srv->queued_request_bytes();
      if (q > max_queued.load()) max_queued = q;
    }
    std::minstd_rand rng(static_cast<uint32_t>(req.correlation_id) + 17u * static_cast<uint32_t>(conn));
    co_await sleep_for(std::chrono::milliseconds(rng() % 4));
    {
      std::lock_guard lock(mu);
      --inflight[conn];
    }
    co_return echo_response(req);
  }, config);
  srv = server.get();

  constexpr int kClients = 3;
  constexpr int kRequests = 150;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      Client client(port());
      std::thread sender([&] {
        for (int i = 0; i < kRequests; ++i) client.send(0, i, std::string(600, char('a' + c)));
      });
      bool all = true;
      for (int i = 0; i < kRequests && all; ++i) {
        auto r = client.receive_echo(std::chrono::milliseconds(10000));
        all = r && r->first == i && r->second == std::string(600, char('a' + c));
      }
      sender.join();
      if (all) ok++;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kClients);
  std::lock_guard lock(mu);
  EXPECT_LE(max_inflight, 2);
  // The node-wide limit admits a frame while under the limit, so it can be passed by at most
  // one frame per connection.
  EXPECT_LE(max_queued.load(), 2500 + kClients * 700);
  EXPECT_TRUE(test::eventually([&] { return server->queued_request_bytes() == 0; }));
}

// The reader really stops: with one request allowed in flight and a dispatcher that never
// completes, the second request is not dispatched.
TEST_F(ServerFixture, ReaderPausesAtTheLimit) {
  ServerConfig config;
  config.max_inflight_requests_per_connection = 1;
  std::atomic<int> dispatched{0};
  start([&](Request req) -> awaitable<Response> {
    dispatched++;
    co_await sleep_for(req.correlation_id == 0 ? std::chrono::milliseconds(300) : std::chrono::milliseconds(0));
    co_return echo_response(req);
  }, config);
  Client c(port());
  c.send(0, 0, "first");
  c.send(0, 1, "second");
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(dispatched.load(), 1);
  auto r0 = c.receive_echo();
  auto r1 = c.receive_echo();
  ASSERT_TRUE(r0 && r1);
  EXPECT_EQ(r0->first, 0);
  EXPECT_EQ(r1->first, 1);
  EXPECT_EQ(dispatched.load(), 2);
}

// Large frames (read partly in place) and small ones (copied from the read-ahead buffer) mixed.
TEST_F(ServerFixture, LargeAndSmallFramesMixed) {
  start([](Request req) -> awaitable<Response> { co_return echo_response(req); });
  Client c(port());
  std::vector<std::string> bodies;
  std::minstd_rand rng(5);
  for (int i = 0; i < 20; ++i) {
    size_t n = (i % 4 == 0) ? 1'000'000 + rng() % 100'000 : rng() % 2000;
    std::string b(n, '\0');
    for (auto& ch : b) ch = static_cast<char>(rng());
    bodies.push_back(std::move(b));
  }
  std::thread sender([&] {
    for (int i = 0; i < 20; ++i) c.send(0, i, bodies[i]);
  });
  for (int i = 0; i < 20; ++i) {
    auto r = c.receive_echo(std::chrono::milliseconds(10000));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->first, i);
    EXPECT_TRUE(r->second == bodies[i]) << "body " << i << " differs";
  }
  sender.join();
}

}  // namespace
}  // namespace brokerd::net::test
