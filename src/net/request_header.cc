#include "request_header.h"

namespace brokerd::net {

std::optional<RequestHeaderPrefix> parse_request_header(std::span<const std::byte> frame) {
  constexpr size_t kFixed = 10;  // api_key, api_version, correlation_id, client_id length
  if (frame.size() < kFixed) return std::nullopt;
  const std::byte* p = frame.data();
  RequestHeaderPrefix h;
  h.api_key = static_cast<int16_t>(read_be16(p));
  h.api_version = static_cast<int16_t>(read_be16(p + 2));
  h.correlation_id = static_cast<int32_t>(read_be32(p + 4));
  const auto len = static_cast<int16_t>(read_be16(p + 8));
  if (len == -1) {
    h.header_end = kFixed;
    return h;
  }
  if (len < 0 || kFixed + static_cast<size_t>(len) > frame.size()) return std::nullopt;
  h.client_id.emplace(reinterpret_cast<const char*>(p + kFixed), static_cast<size_t>(len));
  h.header_end = kFixed + static_cast<size_t>(len);
  return h;
}

}  // namespace brokerd::net
