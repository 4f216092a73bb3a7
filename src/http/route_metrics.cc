#include "http/route_metrics.h"

#include <string>
#include <vector>

#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/metrics/registry.h"

namespace brokerd::http {

namespace {

constexpr const char* kRouteNames[kRoutes] = {"create_topic", "topic_metadata", "produce", "read",
                                              "save_positions", "read_positions", "none"};
// Every status the API answers with.
constexpr unsigned kStatuses[] = {200, 201, 400, 401, 403, 404, 405, 409, 413, 416, 429, 431, 500, 503};

}  // namespace

RouteMetrics::RouteMetrics(metrics::Registry& r) {
  const std::vector<double> buckets(metrics::kLatencyBuckets.begin(), metrics::kLatencyBuckets.end());
  for (size_t i = 0; i < kRoutes; ++i) {
    std::vector<metrics::Label> labels{{"route", kRouteNames[i]}};
    routes_[i] = PerRoute{
        &r.counter("brokerd_http_requests_total", "HTTP API requests, per route.", labels),
        &r.counter("brokerd_http_request_bytes_total", "HTTP API request body bytes, per route.", labels),
        &r.counter("brokerd_http_response_bytes_total", "HTTP API reply body bytes, per route.", labels),
        &r.histogram("brokerd_http_request_latency_seconds",
                     "Time from a whole HTTP API request read to its reply made, per route (a read includes its wait).",
                     buckets, labels),
    };
  }
  for (unsigned status : kStatuses)
    statuses_[status] = &r.counter("brokerd_http_responses_total", "HTTP API replies, per status.",
                                   {{"status", std::to_string(status)}});
  other_status_ = &r.counter("brokerd_http_responses_total", "HTTP API replies, per status.", {{"status", "other"}});
}

void RouteMetrics::observe(Route route, unsigned status, size_t bytes_in, size_t bytes_out,
                           std::chrono::nanoseconds took) {
  auto& m = routes_[static_cast<size_t>(route)];
  m.requests->add();
  m.bytes_in->add(bytes_in);
  m.bytes_out->add(bytes_out);
  m.latency->observe_nanos(static_cast<uint64_t>(took.count() > 0 ? took.count() : 0));
  auto it = statuses_.find(status);
  (it == statuses_.end() ? other_status_ : it->second)->add();
}

}  // namespace brokerd::http
