#pragma once
// Each record value starts with a 12-byte stamp: a 4-byte marker and the wall-clock send
// time in microseconds (little endian). A consumer subtracts it from its own wall clock,
// so end-to-end latency needs producer and consumer clocks in step (the same host, or
// hosts synchronised by NTP/PTP to well below the latencies measured).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

namespace loadgen {

inline constexpr size_t stamp_size = 12;
inline constexpr uint32_t stamp_marker = 0x4c424442;  // "BDBL" little endian

inline int64_t wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline void write_stamp(char* value, int64_t send_us) {
  std::memcpy(value, &stamp_marker, 4);
  std::memcpy(value + 4, &send_us, 8);
}

// The send time of a value written by this tool, or nothing for a foreign record.
inline std::optional<int64_t> read_stamp(const void* value, size_t size) {
  if (value == nullptr || size < stamp_size) return std::nullopt;
  uint32_t marker;
  std::memcpy(&marker, value, 4);
  if (marker != stamp_marker) return std::nullopt;
  int64_t send_us;
  std::memcpy(&send_us, static_cast<const char*>(value) + 4, 8);
  return send_us;
}

}  // namespace loadgen
