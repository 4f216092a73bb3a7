#pragma once
// What the Kafka API layer counts on every request, registered once at start in the node's
// registry. Every member may be updated from any reactor shard without locks or allocation
// (a topic allocates once per shard, the first time that shard serves it).
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

#include "brokerd/metrics/registry.h"

namespace brokerd::metrics {

// Request latency buckets, in seconds.
inline constexpr std::array<double, 14> kLatencyBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                          0.1,    0.25,  0.5,    1,     2.5,   5,     10};

class BrokerMetrics {
 public:
  struct Api {
    Counter& requests;
    Counter& errors;
    Histogram& latency;
  };
  // Columns of topics().
  enum TopicColumn : size_t { bytes_in = 0, records_in = 1, bytes_out = 2 };

  explicit BrokerMetrics(Registry& registry);
  ~BrokerMetrics();

  // Registers the series of one API (at start, before requests flow).
  void add_api(int16_t api_key, std::string_view name);
  // The API's series, or those labelled api="unknown" for a key never added.
  Api& api(int16_t api_key) {
    return api_key >= 0 && api_key < kMaxApiKey && apis_[api_key] ? *apis_[api_key] : *unknown_;
  }
  KeyedCounters& topics() { return topics_; }
  // Per principal (User:alice): what the authorizer refused, the bytes it produced and
  // fetched, the time its clients were throttled by quotas, and the reactor time its requests
  // used (counted only while a request_percentage quota applies to them).
  enum PrincipalColumn : size_t {
    refused = 0,
    principal_bytes_in = 1,
    principal_bytes_out = 2,
    throttled_ms = 3,
    principal_request_us = 4
  };
  void authorization_refused(std::string_view principal) { principals_.row(principal).add(refused, 1); }
  // Adds `amount` to `column` and the throttle time to throttled_ms.
  void principal_traffic(std::string_view principal, PrincipalColumn column, uint64_t amount, int64_t throttle_ms) {
    if (amount == 0 && throttle_ms <= 0) return;
    auto& row = principals_.row(principal);
    if (amount > 0) row.add(column, amount);
    if (throttle_ms > 0) row.add(throttled_ms, static_cast<uint64_t>(throttle_ms));
  }
  Gauge& fetch_purgatory() { return fetch_purgatory_; }
  Gauge& produce_purgatory() { return produce_purgatory_; }
  Registry& registry() { return registry_; }

 private:
  static constexpr int16_t kMaxApiKey = 128;
  Registry& registry_;
  KeyedCounters& topics_;
  KeyedCounters& principals_;
  Gauge& fetch_purgatory_;
  Gauge& produce_purgatory_;
  std::array<std::unique_ptr<Api>, kMaxApiKey> apis_;
  std::unique_ptr<Api> unknown_;
};

}  // namespace brokerd::metrics
