#pragma once
// Forwarding with the requester's identity (KIP-590's Envelope, API 58): a broker wraps a
// request it forwards to the controller (header and body) together with the principal of the
// client that sent it, so the controller acts for that client (the owner of a topic it
// creates). The principal is Kafka's DefaultPrincipalData behind its int16 version.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "brokerd/common/bytes.h"
#include "brokerd/protocol/messages/envelope_request.h"
#include "brokerd/protocol/messages/envelope_response.h"

namespace brokerd::controller {

inline constexpr int16_t kEnvelope = 58;

// "User:alice" as DefaultPrincipalData, and back (nullopt when malformed).
Bytes encode_principal(std::string_view principal);
std::optional<std::string> decode_principal(std::span<const std::byte> data);

// An envelope around one request body (a header naming `api_key` and `version` goes before it).
protocol::EnvelopeRequest envelope_of(int16_t api_key, int16_t version, const Bytes& body, std::string_view principal);

}  // namespace brokerd::controller
