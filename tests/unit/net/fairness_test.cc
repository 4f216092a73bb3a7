// Fair turns: a connection whose client pipelined many requests takes turns with the other
// connections of its reactor instead of dispatching everything it has buffered at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "server_fixture.h"

namespace brokerd::net::test {
namespace {

using boost::asio::awaitable;

struct OneReactor : ServerFixture {
  OneReactor() : ServerFixture(1) {}
};

TEST_F(OneReactor, APipeliningClientTakesTurnsWithAnother) {
  constexpr int kPipelined = 500;
  constexpr int kOther = 1'000'000;
  std::mutex mu;
  std::vector<int> order;  // correlation ids, in dispatch order
  std::promise<void> first_started;
  ServerConfig config;
  config.max_inflight_requests_per_connection = 2 * kPipelined;
  start([&](Request req) -> awaitable<Response> {
    {
      std::lock_guard lock(mu);
      order.push_back(req.correlation_id);
    }
    if (req.correlation_id == 0) {
      // Holds the only reactor while the other client's request arrives: by then the rest of
      // the pipeline is already in this connection's buffer.
      first_started.set_value();
      std::this_thread::sleep_for(200ms);
    }
    co_return echo_response(req);
  }, config);

  Client busy(port()), other(port());
  other.send(18, kOther - 1, "hello");  // both connections accepted before the burst
  ASSERT_TRUE(other.receive_echo());
  std::vector<std::byte> burst;
  for (int i = 0; i < kPipelined; ++i) {
    auto frame = encode_request(18, i, "x");
    burst.insert(burst.end(), frame.begin(), frame.end());
  }
  busy.send_raw(burst);
  ASSERT_EQ(first_started.get_future().wait_for(5s), std::future_status::ready);
  other.send(18, kOther, "hello");
  auto answer = other.receive_echo(10s);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->first, kOther);
  for (int i = 0; i < kPipelined; ++i) ASSERT_TRUE(busy.receive_echo(10s)) << i;

  std::lock_guard lock(mu);
  const auto at = std::find(order.begin(), order.end(), kOther) - order.begin();
  const auto before = std::count_if(order.begin(), order.begin() + at, [](int c) { return c >= 0 && c < kPipelined; });
  // Dispatched after a few turns of the busy client, not after its whole pipeline.
  EXPECT_LT(before, kPipelined / 10) << "the other client's request waited behind " << before << " requests";
}

}  // namespace
}  // namespace brokerd::net::test
