#include "brokerd/cluster/fetch_waiter.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace brokerd::cluster {

void FetchWaiter::wake() {
  if (woken_.exchange(true)) return;
  // The timer belongs to the waiter's executor: cancel it there.
  boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
}

boost::asio::awaitable<void> FetchWaiter::wait_until(std::chrono::steady_clock::time_point deadline) {
  timer_.expires_at(deadline);
  while (!woken_.load() && std::chrono::steady_clock::now() < deadline) {
    co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
}

}  // namespace brokerd::cluster
