#pragma once
// Client quotas applied to requests (KIP-13, KIP-55, KIP-219): the byte rate a request adds
// to its client's bucket, the throttle time a client over its quota gets, and how it waits.
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "brokerd/net/request_time.h"
#include "brokerd/quota/client_quotas.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

// The quota `key` (producer_byte_rate, consumer_byte_rate) that applies to the request's
// user and client id, if any: records `bytes` against its bucket and returns the throttle
// time in ms (0 within the quota or without one). `bucket` names it for unrecord().
int64_t record_quota(HandlerContext& ctx, std::string_view key, double bytes, std::string* bucket = nullptr);
void unrecord_quota(HandlerContext& ctx, const std::string& bucket, double bytes);

// KIP-599, controller_mutation_rate: whether the request may make `mutations` partition
// creations or deletions now. With `strict` (the versions that know
// THROTTLING_QUOTA_EXCEEDED) a client whose bucket is in debt may not; otherwise they are
// taken, even into debt, as Kafka does. `throttle_ms` is raised to what the client owes.
bool take_mutations(HandlerContext& ctx, int32_t mutations, bool strict, int64_t& throttle_ms);

// KIP-219: the connection reads no further request for `ms`. Called before the handler's
// first suspension, this also holds back requests the client pipelined behind this one (the
// connection reads the next frame only once the handler suspends).
void mute(const HandlerContext& ctx, int64_t ms);

// KIP-124, request_percentage: the quota on the reactor time of a client's requests. The
// dispatcher runs such a request on a charging executor (net/request_time.h); the time is
// charged to the client's bucket when the response is built (raising its throttle_time_ms)
// and once more when the handler returns. A follower's fetch is exempt, as Kafka exempts
// inter-broker requests.
struct RequestTimeQuota {
  quota::Applied applied;  // request_percentage: p % of one thread is p x 10 ms per second
  std::shared_ptr<net::TimeAccount> account = std::make_shared<net::TimeAccount>();
  int64_t charged_nanos = 0;
  bool exempt = false;
};
// The request quota of the request's client, if one applies.
std::optional<RequestTimeQuota> request_time_quota(HandlerContext& ctx);
// After the handler: charges what building its response took (the next response tells it).
void charge_request_rest(const HandlerContext& ctx);
// A request version older than KIP-219 (< `client_waits_from`) is answered only after `ms`.
boost::asio::awaitable<void> answer_later(HandlerContext& ctx, int64_t ms, int16_t client_waits_from);

}  // namespace brokerd::kafka
