#include "controller/envelope.h"

#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/default_principal_data.h"
#include "brokerd/protocol/wire.h"

namespace brokerd::controller {

Bytes encode_principal(std::string_view principal) {
  protocol::DefaultPrincipalData p;
  const auto colon = principal.find(':');
  p.type = std::string(colon == std::string_view::npos ? "User" : principal.substr(0, colon));
  p.name = std::string(colon == std::string_view::npos ? principal : principal.substr(colon + 1));
  p.token_authenticated = false;
  protocol::Writer w;
  w.i16(0);
  p.encode(w, 0);
  return std::move(w).finish_bytes();
}

std::optional<std::string> decode_principal(std::span<const std::byte> data) {
  try {
    protocol::Reader r(data);
    if (r.i16() != 0) return std::nullopt;
    protocol::DefaultPrincipalData p;
    p.decode(r, 0);
    if (p.type.empty()) return std::nullopt;
    return p.type + ":" + p.name;
  } catch (const protocol::DecodeError&) {
    return std::nullopt;
  }
}

protocol::EnvelopeRequest envelope_of(int16_t api_key, int16_t version, const Bytes& body, std::string_view principal) {
  protocol::Writer w;
  protocol::encode_request_header(w, api_key, version, 0, "brokerd-forward");
  w.raw(body);
  protocol::EnvelopeRequest env;
  env.request_data = std::move(w).finish_bytes();
  env.request_principal = encode_principal(principal);
  return env;
}

}  // namespace brokerd::controller
