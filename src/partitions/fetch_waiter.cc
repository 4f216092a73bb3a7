#include "brokerd/partitions/fetch_waiter.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "brokerd/partitions/fetch_purgatory.h"

namespace brokerd::partitions {

FetchWaiter::~FetchWaiter() {
  if (purgatory_) purgatory_->forget(this);
}

void FetchWaiter::wake() {
  if (woken_.exchange(true)) return;
  // The timer belongs to the waiter's executor: cancel it there.
  boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
}

void FetchWaiter::reset() {
  woken_ = false;
  // Checked after the store: a stop() before it is seen here, one after it wakes this
  // waiter in its sweep. Either way the wake is not lost.
  if (purgatory_ && purgatory_->stopped()) woken_ = true;
}

boost::asio::awaitable<void> FetchWaiter::wait_until(std::chrono::steady_clock::time_point deadline) {
  timer_.expires_at(deadline);
  while (!woken_.load() && std::chrono::steady_clock::now() < deadline) {
    co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
}

}  // namespace brokerd::partitions
