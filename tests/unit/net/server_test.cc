#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <new>
#include <random>
#include <thread>

#include "server_fixture.h"

// Records the largest single allocation, to prove a hostile size prefix is never allocated.
namespace {
std::atomic<size_t> g_largest_allocation{0};
void* tracked_alloc(size_t n) {
  size_t prev = g_largest_allocation.load(std::memory_order_relaxed);
  while (n > prev && !g_largest_allocation.compare_exchange_weak(prev, n, std::memory_order_relaxed)) {
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(size_t n) { return tracked_alloc(n); }
void* operator new[](size_t n) { return tracked_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace brokerd::net::test {
namespace {

using boost::asio::awaitable;

awaitable<Response> echo(Request req) { co_return echo_response(req); }

TEST_F(ServerFixture, RoundTrip) {
  std::mutex mu;
  std::vector<std::string> client_ids;
  std::vector<std::string> listeners;
  start([&](Request req) -> awaitable<Response> {
    {
      std::lock_guard lock(mu);
      client_ids.push_back(req.client_id.value_or("<null>"));
      listeners.push_back(req.connection->listener);
    }
    co_return echo_response(req);
  });
  Client c(port());
  c.send(18, 7, "hello");
  auto r = c.receive_echo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 7);
  EXPECT_EQ(r->second, "hello");
  c.send_raw(encode_request(3, 8, "world", std::nullopt));
  r = c.receive_echo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 8);
  EXPECT_EQ(r->second, "world");
  std::lock_guard lock(mu);
  EXPECT_EQ(client_ids, (std::vector<std::string>{"test", "<null>"}));
  EXPECT_EQ(listeners, (std::vector<std::string>{"PLAINTEXT", "PLAINTEXT"}));
}

TEST_F(ServerFixture, ConnectionsSpreadOverShards) {
  std::mutex mu;
  std::set<size_t> shards;
  std::set<uint64_t> ids;
  start([&](Request req) -> awaitable<Response> {
    {
      std::lock_guard lock(mu);
      shards.insert(req.connection->shard);
      ids.insert(req.connection->id);
      EXPECT_EQ(static_cast<int>(req.connection->shard), current_shard());
    }
    co_return echo_response(req);
  });
  for (int i = 0; i < 4; ++i) {
    Client c(port());
    c.send(1, i, "x");
    ASSERT_TRUE(c.receive_echo());
  }
  std::lock_guard lock(mu);
  EXPECT_EQ(shards.size(), 2u);
  EXPECT_EQ(ids.size(), 4u);
}

TEST_F(ServerFixture, PipelinedResponsesInRequestOrderWithRandomDelays) {
  std::mutex mu;
  std::vector<int32_t> started;
  std::vector<int32_t> finished;
  std::string events;  // "s<id>" at start, "p<id>" just before the first suspension
  start([&](Request req) -> awaitable<Response> {
    const int32_t id = req.correlation_id;
    {
      std::lock_guard lock(mu);
      started.push_back(id);
      events += "s" + std::to_string(id) + "p" + std::to_string(id);
    }
    std::minstd_rand rng(static_cast<uint32_t>(id) * 7919u + 1);
    co_await sleep_for(std::chrono::milliseconds(rng() % 30));
    {
      std::lock_guard lock(mu);
      finished.push_back(id);
    }
    co_return echo_response(req);
  });
  constexpr int kRequests = 60;
  Client c(port());
  std::vector<std::byte> all;
  for (int i = 0; i < kRequests; ++i) {
    auto one = encode_request(0, i, "r" + std::to_string(i));
    all.insert(all.end(), one.begin(), one.end());
  }
  c.send_raw(all);  // one write: the server sees them pipelined
  for (int i = 0; i < kRequests; ++i) {
    auto r = c.receive_echo();
    ASSERT_TRUE(r) << "response " << i;
    EXPECT_EQ(r->first, i);
    EXPECT_EQ(r->second, "r" + std::to_string(i));
  }
  std::lock_guard lock(mu);
  std::vector<int32_t> in_order(kRequests);
  for (int i = 0; i < kRequests; ++i) in_order[i] = i;
  EXPECT_EQ(started, in_order);
  EXPECT_NE(finished, in_order) << "delays should have completed requests out of order";
}

TEST_F(ServerFixture, DispatchRunsUntilFirstSuspensionBeforeNextStarts) {
  std::mutex mu;
  std::vector<std::string> events;
  start([&](Request req) -> awaitable<Response> {
    const auto id = std::to_string(req.correlation_id);
    { std::lock_guard lock(mu); events.push_back("start " + id); }
    // Non-suspending work, as a produce handler appending to a partition would do.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    { std::lock_guard lock(mu); events.push_back("suspend " + id); }
    co_await sleep_for(std::chrono::milliseconds(5));
    co_return echo_response(req);
  });
  Client c(port());
  std::vector<std::byte> all;
  for (int i = 0; i < 10; ++i) {
    auto one = encode_request(0, i, "");
    all.insert(all.end(), one.begin(), one.end());
  }
  c.send_raw(all);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(c.receive_echo());
  std::lock_guard lock(mu);
  ASSERT_EQ(events.size(), 20u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(events[2 * i], "start " + std::to_string(i));
    EXPECT_EQ(events[2 * i + 1], "suspend " + std::to_string(i));
  }
}

TEST_F(ServerFixture, NoResponseEntriesKeepOrder) {
  start([&](Request req) -> awaitable<Response> {
    co_await sleep_for(std::chrono::milliseconds((req.correlation_id * 13) % 17));
    auto r = echo_response(req);
    r.send = req.correlation_id % 3 != 0;  // every third request is "acks=0"
    co_return r;
  });
  Client c(port());
  std::vector<std::byte> all;
  for (int i = 0; i < 30; ++i) {
    auto one = encode_request(0, i, "b");
    all.insert(all.end(), one.begin(), one.end());
  }
  c.send_raw(all);
  for (int i = 0; i < 30; ++i) {
    if (i % 3 == 0) continue;
    auto r = c.receive_echo();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->first, i);
  }
  EXPECT_FALSE(c.receive(std::chrono::milliseconds(100))) << "a no-response entry was answered";
  EXPECT_TRUE(test::eventually([&] { return server->queued_request_bytes() == 0; }));
}

TEST_F(ServerFixture, CloseAfterResponse) {
  start([&](Request req) -> awaitable<Response> {
    auto r = echo_response(req);
    r.close_after = req.correlation_id == 2;
    co_return r;
  });
  Client c(port());
  for (int i = 1; i <= 3; ++i) c.send(0, i, "z");
  ASSERT_TRUE(c.receive_echo());
  ASSERT_TRUE(c.receive_echo());
  EXPECT_TRUE(c.closed_within(std::chrono::milliseconds(3000)));
}

TEST_F(ServerFixture, HugeAndNegativeSizesCloseWithoutAllocating) {
  start(echo);
  Client good(port());
  good.send(0, 1, "before");
  ASSERT_TRUE(good.receive_echo());

  const size_t largest_before = g_largest_allocation.load();
  Client huge(port());
  huge.send_raw({std::byte{0x7f}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0}, std::byte{1}});
  EXPECT_TRUE(huge.closed_within(std::chrono::milliseconds(3000)));
  Client negative(port());
  negative.send_raw({std::byte{0x80}, std::byte{0}, std::byte{0}, std::byte{0}});
  EXPECT_TRUE(negative.closed_within(std::chrono::milliseconds(3000)));
  Client tiny(port());
  tiny.send_raw({std::byte{0}, std::byte{0}, std::byte{0}, std::byte{3}, std::byte{1}, std::byte{2}, std::byte{3}});
  EXPECT_TRUE(tiny.closed_within(std::chrono::milliseconds(3000)));
  EXPECT_LT(g_largest_allocation.load(), std::max<size_t>(largest_before, 16u << 20));

  good.send(0, 2, "after");
  auto r = good.receive_echo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->second, "after");
}

TEST_F(ServerFixture, MalformedClientIdCloses) {
  start(echo);
  Client bad(port());
  auto frame = encode_request(0, 1, "", "abc");
  frame[13] = std::byte{50};  // client_id length 50, only 3 bytes follow
  bad.send_raw(frame);
  EXPECT_TRUE(bad.closed_within(std::chrono::milliseconds(3000)));
  Client good(port());
  good.send(0, 2, "ok");
  EXPECT_TRUE(good.receive_echo());
}

TEST_F(ServerFixture, TruncatedFrameThenClose) {
  start(echo);
  {
    Client c(port());
    auto frame = encode_request(0, 1, std::string(100, 'x'));
    frame.resize(30);
    c.send_raw(frame);
    c.shutdown_write();
    EXPECT_TRUE(c.closed_within(std::chrono::milliseconds(3000)));
  }
  EXPECT_TRUE(test::eventually([&] { return server->connection_count() == 0; }));
  EXPECT_EQ(server->queued_request_bytes(), 0);
}

TEST_F(ServerFixture, IdleConnectionIsClosed) {
  ServerConfig config;
  config.connections_max_idle_ms = 200;
  start(echo, config);
  Client busy(port());
  Client idle(port());
  // The busy one keeps talking past the idle limit and must stay open.
  for (int i = 0; i < 6; ++i) {
    busy.send(0, i, "k");
    ASSERT_TRUE(busy.receive_echo());
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
  }
  EXPECT_TRUE(idle.closed_within(std::chrono::milliseconds(3000)));
  busy.send(0, 99, "still here");
  EXPECT_TRUE(busy.receive_echo());
}

TEST_F(ServerFixture, SlowRequestIsNotIdle) {
  ServerConfig config;
  config.connections_max_idle_ms = 100;
  start([](Request req) -> awaitable<Response> {
    co_await sleep_for(std::chrono::milliseconds(400));
    co_return echo_response(req);
  }, config);
  Client c(port());
  c.send(0, 5, "slow");
  auto r = c.receive_echo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 5);
}

TEST_F(ServerFixture, DispatchExceptionClosesOnlyThatConnection) {
  start([](Request req) -> awaitable<Response> {
    if (body_of(req) == "throw") throw std::runtime_error("handler bug");
    co_return echo_response(req);
  });
  Client a(port());
  Client b(port());
  a.send(0, 1, "throw");
  EXPECT_TRUE(a.closed_within(std::chrono::milliseconds(3000)));
  b.send(0, 2, "fine");
  auto r = b.receive_echo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->second, "fine");
}

TEST_F(ServerFixture, ClientHalfCloseStillGetsAnswers) {
  start([](Request req) -> awaitable<Response> {
    co_await sleep_for(std::chrono::milliseconds(50));
    co_return echo_response(req);
  });
  Client c(port());
  c.send(0, 1, "a");
  c.send(0, 2, "b");
  c.shutdown_write();
  auto r1 = c.receive_echo();
  auto r2 = c.receive_echo();
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->first, 1);
  EXPECT_EQ(r2->first, 2);
  EXPECT_TRUE(c.closed_within(std::chrono::milliseconds(3000)));
}

TEST_F(ServerFixture, GracefulStopFinishesInFlightRequests) {
  std::atomic<int> started{0};
  start([&](Request req) -> awaitable<Response> {
    started++;
    co_await sleep_for(std::chrono::milliseconds(300));
    co_return echo_response(req);
  });
  Client c(port());
  for (int i = 0; i < 3; ++i) c.send(0, i, "inflight");
  ASSERT_TRUE(test::eventually([&] { return started.load() == 3; }));
  const auto t0 = std::chrono::steady_clock::now();
  std::thread stopper([&] { server->stop(); });
  for (int i = 0; i < 3; ++i) {
    auto r = c.receive_echo();
    ASSERT_TRUE(r) << "response " << i << " lost in shutdown";
    EXPECT_EQ(r->first, i);
  }
  EXPECT_TRUE(c.closed_within(std::chrono::milliseconds(3000)));
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(server->connection_count(), 0u);
  // No longer accepting.
  EXPECT_THROW(
      {
        Client late(port());
        late.send(0, 1, "x");
        if (!late.receive_echo(std::chrono::milliseconds(300))) throw std::runtime_error("refused");
      },
      std::runtime_error);
}

TEST_F(ServerFixture, StopCutsRequestsThatNeverFinish) {
  ServerConfig config;
  config.shutdown_drain_ms = 200;
  start([](Request req) -> awaitable<Response> {
    co_await sleep_for(std::chrono::hours(1));
    co_return echo_response(req);
  }, config);
  Client c(port());
  c.send(0, 1, "forever");
  ASSERT_TRUE(test::eventually([&] { return server->queued_request_bytes() > 0; }));
  const auto t0 = std::chrono::steady_clock::now();
  server->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_TRUE(c.closed_within(std::chrono::milliseconds(3000)));
  EXPECT_EQ(server->queued_request_bytes(), 0);
}

}  // namespace
}  // namespace brokerd::net::test
