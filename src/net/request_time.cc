#include "brokerd/net/request_time.h"

#include <boost/asio/execution.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/require.hpp>

#include <chrono>
#include <utility>

namespace brokerd::net {

namespace asio = boost::asio;

namespace {

// The account of the charged step running on this thread, and when the step began.
thread_local const std::shared_ptr<TimeAccount>* tl_account = nullptr;
thread_local std::chrono::steady_clock::time_point tl_step_start;

// Times one step, unless it runs inside another charged step.
class ChargedStep {
 public:
  explicit ChargedStep(const std::shared_ptr<TimeAccount>& account) {
    if (tl_account) return;
    tl_account = &account;
    account_ = account.get();
    tl_step_start = std::chrono::steady_clock::now();
  }
  ~ChargedStep() {
    if (!account_) return;
    const auto spent = std::chrono::steady_clock::now() - tl_step_start;
    account_->nanos.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count(),
                              std::memory_order_relaxed);
    tl_account = nullptr;
  }
  ChargedStep(const ChargedStep&) = delete;
  ChargedStep& operator=(const ChargedStep&) = delete;

 private:
  TimeAccount* account_ = nullptr;
};

// An executor adapter: what `inner` would run, timed. Properties are those of `inner`; a
// required or preferred variant of it is wrapped again, so work tracking, blocking and
// relationship variants keep charging.
class Charging {
 public:
  Charging(asio::any_io_executor inner, std::shared_ptr<TimeAccount> account)
      : inner_(std::move(inner)), account_(std::move(account)) {}

  template <typename Property>
  auto query(const Property& p) const -> decltype(asio::query(std::declval<const asio::any_io_executor&>(), p)) {
    return asio::query(inner_, p);
  }
  template <typename Property>
    requires requires(const asio::any_io_executor& e, const Property& p) { asio::require(e, p); }
  Charging require(const Property& p) const {
    return Charging(asio::require(inner_, p), account_);
  }
  template <typename Property>
    requires requires(const asio::any_io_executor& e, const Property& p) { asio::prefer(e, p); }
  Charging prefer(const Property& p) const {
    return Charging(asio::prefer(inner_, p), account_);
  }

  template <typename F>
  void execute(F f) const {
    inner_.execute([f = std::move(f), account = account_]() mutable {
      ChargedStep step(account);
      f();
    });
  }

  friend bool operator==(const Charging& a, const Charging& b) noexcept {
    return a.account_ == b.account_ && a.inner_ == b.inner_;
  }
  friend bool operator!=(const Charging& a, const Charging& b) noexcept { return !(a == b); }

 private:
  asio::any_io_executor inner_;
  std::shared_ptr<TimeAccount> account_;
};

}  // namespace

asio::any_io_executor charging(asio::any_io_executor ex, std::shared_ptr<TimeAccount> account) {
  return asio::any_io_executor(Charging(std::move(ex), std::move(account)));
}

int64_t charged_nanos(const TimeAccount& account) {
  int64_t n = account.nanos.load(std::memory_order_relaxed);
  if (tl_account && tl_account->get() == &account) {
    n += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - tl_step_start).count();
  }
  return n;
}

asio::any_io_executor charging_current(asio::any_io_executor ex) {
  if (!tl_account) return ex;
  return charging(std::move(ex), *tl_account);
}

}  // namespace brokerd::net
