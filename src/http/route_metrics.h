#pragma once
// What the /v1 API counts, per route: requests, request and reply bytes and the latency; and
// the replies per status. Registered at start; updated from any shard without locks.
#include <array>
#include <chrono>
#include <cstddef>
#include <map>

namespace brokerd::metrics {
class Counter;
class Histogram;
class Registry;
}  // namespace brokerd::metrics

namespace brokerd::http {

enum class Route : size_t {
  create_topic,
  topic_metadata,
  produce,
  read,
  save_positions,
  read_positions,
  none,  // no such route, or refused before one was chosen (401, 429)
};
inline constexpr size_t kRoutes = static_cast<size_t>(Route::none) + 1;

class RouteMetrics {
 public:
  explicit RouteMetrics(metrics::Registry& registry);
  void observe(Route route, unsigned status, size_t bytes_in, size_t bytes_out, std::chrono::nanoseconds took);

 private:
  struct PerRoute {
    metrics::Counter* requests;
    metrics::Counter* bytes_in;
    metrics::Counter* bytes_out;
    metrics::Histogram* latency;
  };
  std::array<PerRoute, kRoutes> routes_{};
  std::map<unsigned, metrics::Counter*> statuses_;  // fixed at start: read only after
  metrics::Counter* other_status_ = nullptr;
};

}  // namespace brokerd::http
