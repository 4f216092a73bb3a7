#pragma once
// Wall-clock milliseconds since the epoch: Kafka's timestamps, retention and expiry all
// use this clock.
#include <chrono>
#include <cstdint>

namespace brokerd {

inline int64_t wall_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace brokerd
