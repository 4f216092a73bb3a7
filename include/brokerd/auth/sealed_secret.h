#pragma once
// Secrets kept at rest in the metadata log (a mirror link's source password): sealed with a
// key derived from the cluster's password.encoder.secret, as Kafka keeps the passwords of
// dynamic configs. AES-256-GCM under a key from PBKDF2-HMAC-SHA256 (a fresh salt per value),
// written as "sealed:v1:" + base64(salt | nonce | ciphertext | tag).
#include <optional>
#include <string>
#include <string_view>

namespace brokerd::auth {

bool is_sealed(std::string_view value);
// Throws std::runtime_error when OpenSSL fails (no randomness).
std::string seal(std::string_view plain, std::string_view secret);
// The plain text, or nullopt when the value is malformed or was sealed under another secret.
std::optional<std::string> unseal(std::string_view sealed, std::string_view secret);

}  // namespace brokerd::auth
