#pragma once
// Request and response headers, and whole frames for clients and tests.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/protocol/wire.h"

namespace brokerd::protocol {

struct DecodedRequestHeader {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
};

// Reads header v0/v1/v2 as the api table says; for an unknown key, the v1 part only (so the
// broker can still answer with the correlation id).
DecodedRequestHeader decode_request_header(Reader& r);
void encode_request_header(Writer& w, int16_t api_key, int16_t api_version,
                           int32_t correlation_id, std::optional<std::string_view> client_id);
void encode_response_header(Writer& w, int16_t api_key, int16_t api_version,
                            int32_t correlation_id);
// Returns the correlation id.
int32_t decode_response_header(Reader& r, int16_t api_key, int16_t api_version);

// Header + body, without the 4-byte size (the network layer writes it).
template <class Msg>
std::vector<OutChunk> encode_response(int16_t api_key, int16_t version, int32_t correlation_id,
                                      const Msg& msg) {
  Writer w;
  encode_response_header(w, api_key, version, correlation_id);
  msg.encode(w, version);
  return std::move(w).finish();
}

// A message body alone, as one buffer (no header).
template <class Msg>
Bytes encode_body(const Msg& msg, int16_t version) {
  Writer w;
  msg.encode(w, version);
  return std::move(w).finish_bytes();
}

// Skips the tagged fields of a request header v2 (flexible versions), which the header
// prefix the network layer parsed stops short of.
void skip_request_header_tags(Reader& r, int16_t api_key, int16_t api_version);

// Bytes with the 4-byte size prefix first.
Bytes with_size_prefix(Bytes body);
// The frame size a 4-byte big-endian prefix says (what with_size_prefix writes).
inline uint32_t size_prefix(const std::byte* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | static_cast<uint32_t>(p[3]);
}

// A complete request frame, size prefix included.
template <class Msg>
Bytes encode_request(const Msg& msg, int16_t version, int32_t correlation_id,
                     std::string_view client_id) {
  Writer w;
  encode_request_header(w, Msg::api_key, version, correlation_id, client_id);
  msg.encode(w, version);
  return with_size_prefix(std::move(w).finish_bytes());
}

}  // namespace brokerd::protocol
