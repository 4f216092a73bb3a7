#pragma once
// Parsing the fixed prefix of a Kafka request header (v1/v2): api_key, api_version,
// correlation_id, client_id (nullable int16-length string). The tagged fields of v2 are left
// to the dispatcher, which knows whether the version is flexible.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace brokerd::net {

// The smallest frame that can carry api_key, api_version and correlation_id.
inline constexpr int32_t kMinFrameSize = 8;

struct RequestHeaderPrefix {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
  size_t header_end = 0;
};

// nullopt when the frame is too short or client_id is malformed.
std::optional<RequestHeaderPrefix> parse_request_header(std::span<const std::byte> frame);

inline uint16_t read_be16(const std::byte* p) {
  return static_cast<uint16_t>((static_cast<uint16_t>(p[0]) << 8) | static_cast<uint16_t>(p[1]));
}

// Requests that answer without waiting for any other request — Fetch and
// OffsetForLeaderEpoch, as consumers and followers send them — are read even when the
// node-wide budget (queued.max.request.bytes) is spent, up to 1 MiB each, still within the
// connection's own bounds. acks=all produce requests hold their bytes until followers fetch;
// if the follower fetches waited for those bytes, nothing would move until the produce
// requests timed out.
inline constexpr int32_t kIndependentFrameMax = 1 << 20;
inline bool answers_alone(int16_t api_key, int32_t frame_size) {
  constexpr int16_t kFetch = 1, kOffsetForLeaderEpoch = 23;
  return (api_key == kFetch || api_key == kOffsetForLeaderEpoch) && frame_size <= kIndependentFrameMax;
}

inline uint32_t read_be32(const std::byte* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

inline void write_be32(std::byte* p, uint32_t v) {
  p[0] = std::byte(v >> 24);
  p[1] = std::byte(v >> 16);
  p[2] = std::byte(v >> 8);
  p[3] = std::byte(v);
}

}  // namespace brokerd::net
