#include "brokerd/protocol/framing.h"

#include <limits>

#include "brokerd/protocol/messages/api_table.h"

namespace brokerd::protocol {

DecodedRequestHeader decode_request_header(Reader& r) {
  DecodedRequestHeader h;
  h.api_key = r.i16();
  h.api_version = r.i16();
  h.correlation_id = r.i32();
  int16_t header_version = request_header_version(h.api_key, h.api_version);
  if (header_version >= 1) {
    // client_id keeps the int16 length even in flexible headers.
    h.client_id = r.nullable_string(false);
  }
  if (header_version >= 2) {
    std::vector<TaggedField> ignored;
    r.tagged_fields(ignored, [](uint32_t, Reader&) { return false; });
  }
  return h;
}

void encode_request_header(Writer& w, int16_t api_key, int16_t api_version,
                           int32_t correlation_id, std::optional<std::string_view> client_id) {
  int16_t header_version = request_header_version(api_key, api_version);
  w.i16(api_key);
  w.i16(api_version);
  w.i32(correlation_id);
  if (header_version >= 1) {
    if (client_id) w.string(*client_id, false);
    else w.i16(-1);
  }
  if (header_version >= 2) w.uvarint(0);
}

void encode_response_header(Writer& w, int16_t api_key, int16_t api_version,
                            int32_t correlation_id) {
  w.i32(correlation_id);
  if (response_header_version(api_key, api_version) >= 1) w.uvarint(0);
}

int32_t decode_response_header(Reader& r, int16_t api_key, int16_t api_version) {
  int32_t correlation_id = r.i32();
  if (response_header_version(api_key, api_version) >= 1) {
    std::vector<TaggedField> ignored;
    r.tagged_fields(ignored, [](uint32_t, Reader&) { return false; });
  }
  return correlation_id;
}

void skip_request_header_tags(Reader& r, int16_t api_key, int16_t api_version) {
  if (request_header_version(api_key, api_version) < 2) return;
  std::vector<TaggedField> ignored;
  r.tagged_fields(ignored, [](uint32_t, Reader&) { return false; });
}

Bytes with_size_prefix(Bytes body) {
  if (body.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw EncodeError("frame too large");
  }
  Bytes out(4 + body.size());
  auto n = static_cast<uint32_t>(body.size());
  out[0] = static_cast<std::byte>(n >> 24);
  out[1] = static_cast<std::byte>(n >> 16);
  out[2] = static_cast<std::byte>(n >> 8);
  out[3] = static_cast<std::byte>(n);
  std::copy(body.begin(), body.end(), out.begin() + 4);
  return out;
}

}  // namespace brokerd::protocol
