#include "brokerd/metrics/broker_metrics.h"

#include <vector>

namespace brokerd::metrics {
namespace {

std::unique_ptr<BrokerMetrics::Api> make_api(Registry& r, std::string_view name) {
  std::vector<Label> labels{{"api", name}};
  return std::unique_ptr<BrokerMetrics::Api>(new BrokerMetrics::Api{
      r.counter("brokerd_requests_total", "Requests received, per API.", labels),
      r.counter("brokerd_request_errors_total",
                "Requests that failed: closed connections (unknown API or version, malformed or failed "
                "request) and, for Produce and Fetch, responses with an error for some partition.",
                labels),
      r.histogram("brokerd_request_latency_seconds",
                  "Time from dispatch to response, per API (Fetch includes its wait in the purgatory).",
                  std::vector<double>(kLatencyBuckets.begin(), kLatencyBuckets.end()), labels),
  });
}

}  // namespace

BrokerMetrics::BrokerMetrics(Registry& registry)
    : registry_(registry),
      topics_(registry.keyed_counters(
          "topic", {{"brokerd_topic_bytes_in_total", "Record batch bytes appended, per topic."},
                    {"brokerd_topic_records_in_total", "Records appended, per topic."},
                    {"brokerd_topic_bytes_out_total", "Record batch bytes returned to consumers by Fetch, per topic (replication excluded)."}})),
      principals_(registry.keyed_counters(
          "principal", {{"brokerd_principal_authorization_refused_total",
                         "Requests (or parts of them: a topic, a group) the authorizer refused, per principal."},
                        {"brokerd_principal_bytes_in_total", "Record batch bytes appended for the principal's producers."},
                        {"brokerd_principal_bytes_out_total",
                         "Record batch bytes returned to the principal's consumers by Fetch (replication excluded)."},
                        {"brokerd_principal_throttled_milliseconds_total",
                         "Time the principal's clients were told to wait by client quotas."},
                        {"brokerd_principal_request_time_microseconds_total",
                         "Reactor time the principal's requests used, counted while a request_percentage "
                         "quota applies to them."}})),
      fetch_purgatory_(registry.gauge("brokerd_fetch_purgatory_size",
                                      "Fetch requests waiting for min_bytes or max_wait_ms.")),
      produce_purgatory_(registry.gauge(
          "brokerd_produce_purgatory_size",
          "Produce requests waiting for replicas (acks=all). With one replica per partition a produce "
          "completes at append, so this stays 0.")) {
  unknown_ = make_api(registry, "unknown");
}

BrokerMetrics::~BrokerMetrics() = default;

void BrokerMetrics::add_api(int16_t api_key, std::string_view name) {
  if (api_key < 0 || api_key >= kMaxApiKey || apis_[api_key]) return;
  apis_[api_key] = make_api(registry_, name);
}

}  // namespace brokerd::metrics
