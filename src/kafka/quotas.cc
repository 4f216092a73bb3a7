#include "kafka/quotas.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/clock.h"
#include "brokerd/kafka/services.h"
#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/quota/throttler.h"

namespace brokerd::kafka {

namespace {

// The quota `key` that applies to the request's user and client id, if any.
std::optional<quota::Applied> applied_quota(HandlerContext& ctx, std::string_view key) {
  auto image = ctx.services.metadata.image();
  if (image->client_quotas->empty() || !ctx.request.connection) return std::nullopt;
  std::string_view principal = ctx.request.connection->principal;
  if (principal.starts_with("User:")) principal.remove_prefix(5);
  return quota::applicable(*image->client_quotas, key, std::string(principal), ctx.request.client_id.value_or(""));
}

}  // namespace

bool take_mutations(HandlerContext& ctx, int32_t mutations, bool strict, int64_t& throttle_ms) {
  auto applied = applied_quota(ctx, quota::kControllerMutationRate);
  if (!applied) return true;
  auto& t = ctx.services.throttler;
  const int64_t now = wall_clock_ms();
  if (const int64_t owed = t.debt_ms(applied->bucket, applied->value, now); strict && owed > 0) {
    throttle_ms = std::max(throttle_ms, owed);
    return false;
  }
  throttle_ms = std::max(throttle_ms, t.record(applied->bucket, mutations, applied->value, now));
  return true;
}

int64_t record_quota(HandlerContext& ctx, std::string_view key, double bytes, std::string* bucket) {
  auto applied = applied_quota(ctx, key);
  if (!applied) return 0;
  if (bucket) *bucket = applied->bucket;
  return ctx.services.throttler.record(applied->bucket, bytes, applied->value, wall_clock_ms());
}

void unrecord_quota(HandlerContext& ctx, const std::string& bucket, double bytes) {
  ctx.services.throttler.unrecord(bucket, bytes, wall_clock_ms());
}

std::optional<RequestTimeQuota> request_time_quota(HandlerContext& ctx) {
  auto applied = applied_quota(ctx, quota::kRequestPercentage);
  if (!applied) return std::nullopt;
  RequestTimeQuota q;
  q.applied = std::move(*applied);
  return q;
}

namespace {

// Charges what the request used since the last charge; `told`: the throttle goes into the
// response being built (and so into the principal's throttle time).
int64_t charge(const HandlerContext& ctx, bool told) {
  RequestTimeQuota* q = ctx.request_time;
  if (!q || q->exempt) return 0;
  const int64_t spent = net::charged_nanos(*q->account);
  const int64_t fresh = spent - q->charged_nanos;
  q->charged_nanos = spent;
  const double fresh_ms = static_cast<double>(fresh) / 1e6;
  const int64_t throttle_ms = ctx.services.throttler.record(q->applied.bucket, fresh_ms, q->applied.value * 10.0,
                                                            wall_clock_ms());
  if (ctx.request.connection)
    ctx.services.metrics.principal_traffic(ctx.request.connection->principal,
                                           metrics::BrokerMetrics::principal_request_us,
                                           static_cast<uint64_t>(fresh / 1000), told ? throttle_ms : 0);
  mute(ctx, throttle_ms);
  return throttle_ms;
}

}  // namespace

int32_t charge_request_time(const HandlerContext& ctx) {
  return static_cast<int32_t>(std::min<int64_t>(charge(ctx, true), INT32_MAX));
}

void charge_request_rest(const HandlerContext& ctx) { charge(ctx, false); }

void mute(const HandlerContext& ctx, int64_t ms) {
  if (ms <= 0 || !ctx.request.connection) return;
  auto& until = ctx.request.connection->throttled_until;
  until = std::max(until, std::chrono::steady_clock::now() + std::chrono::milliseconds(ms));
}

boost::asio::awaitable<void> answer_later(HandlerContext& ctx, int64_t ms, int16_t client_waits_from) {
  if (ms <= 0 || ctx.version >= client_waits_from) co_return;
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  timer.expires_after(std::chrono::milliseconds(ms));
  co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
}

}  // namespace brokerd::kafka
