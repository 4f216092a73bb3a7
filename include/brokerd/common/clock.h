#pragma once
// The two clocks: wall-clock milliseconds since the epoch (Kafka's timestamps, retention and
// expiry) and monotonic milliseconds (timeouts, sessions, the raft core's time).
#include <chrono>
#include <cstdint>

namespace brokerd {

inline int64_t wall_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

inline int64_t steady_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace brokerd
