#pragma once
// Base64 (RFC 4648, padded) and random bytes, for SCRAM's messages and sealed secrets.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace brokerd::auth {

std::string base64_encode(std::string_view in);
// The same, appended to `out` (the HTTP API's reads: a megabyte at a time, without a string
// per value).
void base64_append(std::string& out, std::string_view in);
// Strict: the alphabet, padding and unused bits of the one canonical encoding; nullopt else.
std::optional<std::string> base64_decode(std::string_view in);
// `n` bytes from OpenSSL's generator; throws std::runtime_error when it has none.
std::string random_bytes(size_t n);

}  // namespace brokerd::auth
