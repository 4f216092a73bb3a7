// Decodes arbitrary bytes as a request frame body (header, then the body for that key and
// version). Malformed input must end in DecodeError; anything decoded must re-encode to bytes
// that decode and re-encode identically.
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/api_table.h"

using namespace brokerd;
using namespace brokerd::protocol;

namespace {

template <typename Msg>
void check_body(Reader& r, int16_t version) {
  if (version < Msg::min_version || version > Msg::max_version) return;
  Msg msg;
  msg.decode(r, version);
  Writer w;
  msg.encode(w, version);
  Bytes first = std::move(w).finish_bytes();
  Reader again(first);
  Msg copy;
  copy.decode(again, version);
  Writer w2;
  copy.encode(w2, version);
  // Bytes rather than operator==, so a NaN double cannot cause a false alarm.
  if (std::move(w2).finish_bytes() != first || again.remaining() != 0) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r(std::as_bytes(std::span<const uint8_t>(data, size)));
  try {
    DecodedRequestHeader h = decode_request_header(r);
    visit_request(h.api_key, [&](auto type) {
      using Msg = typename decltype(type)::type;
      if constexpr (!std::is_void_v<Msg>) check_body<Msg>(r, h.api_version);
    });
  } catch (const DecodeError&) {
  }
  return 0;
}
