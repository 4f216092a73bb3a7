#pragma once
// Reactor time charged to a request, for request_percentage quotas (KIP-124).
//
// A request whose client has such a quota runs on a charging executor: every step of its
// coroutine (from each resumption to the next suspension) is timed and added to the
// request's account, and so is the work it hands to another shard through run_on(). Waits
// (a purgatory, a timer, the disk) cost nothing. Steps that run inline inside another charged
// step are counted once, by the outer one.
#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

namespace brokerd::net {

struct TimeAccount {
  std::atomic<int64_t> nanos{0};
};

// `ex`, charging everything it runs to `account`.
boost::asio::any_io_executor charging(boost::asio::any_io_executor ex, std::shared_ptr<TimeAccount> account);

// What `account` has been charged so far, with the step running on this thread if it is
// charged to it.
int64_t charged_nanos(const TimeAccount& account);

// `ex` charging the account of the step running on this thread, or `ex` itself when the step
// is charged to nobody.
boost::asio::any_io_executor charging_current(boost::asio::any_io_executor ex);

}  // namespace brokerd::net
