#pragma once
// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka uses them (KIP-84, KIP-554):
// credentials derived from a password, the server side of one exchange, and the client side
// (brokerctl, the mirror link's source connection, tests).
//
// Byte strings (salt, keys) are std::string: they travel as Kafka `bytes` and base64 only.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace brokerd::auth {

// Kafka's ScramMechanism codes (UserScramCredentialRecord, AlterUserScramCredentials).
enum class ScramMechanism : int8_t { sha256 = 1, sha512 = 2 };

// "SCRAM-SHA-256" / "SCRAM-SHA-512"; nullopt for any other name.
std::optional<ScramMechanism> scram_mechanism(std::string_view name);
std::optional<ScramMechanism> scram_mechanism(int8_t code);
std::string_view mechanism_name(ScramMechanism m);

// Kafka's bounds on iterations (AlterUserScramCredentials refuses others).
constexpr int32_t kMinScramIterations = 4096;
constexpr int32_t kMaxScramIterations = 16384;
// What brokerctl salts new passwords with, and what an unknown user is answered with.
constexpr int32_t kDefaultScramIterations = 8192;

// What the server keeps of a password: never the password, never the salted password.
struct ScramCredential {
  ScramMechanism mechanism = ScramMechanism::sha256;
  std::string salt;
  std::string stored_key;  // H(HMAC(salted_password, "Client Key"))
  std::string server_key;  // HMAC(salted_password, "Server Key")
  int32_t iterations = kMinScramIterations;
};

// Hi(password, salt, iterations): PBKDF2 with the mechanism's HMAC.
std::string salted_password(ScramMechanism m, std::string_view password, std::string_view salt, int32_t iterations);
// The stored and server keys of a salted password (what AlterUserScramCredentials carries).
ScramCredential credential_from_salted(ScramMechanism m, std::string_view salt, std::string_view salted,
                                       int32_t iterations);
// A fresh random salt (32 bytes) and the credential of `password` with it.
std::string random_salt();
ScramCredential make_credential(ScramMechanism m, std::string_view password, int32_t iterations);

// How the server answers a user it has no credential for: as if it had one, with a salt that
// is the same at every exchange, across restarts, and (given the same key) on every node,
// and the default iteration count, so that the server-first message does not tell unknown
// users apart from known ones; the exchange then fails at its final step.
struct ScramDecoy {
  std::string key;  // HMAC-SHA-256 key of the salts; empty: a random key for this process only
  int32_t iterations = kDefaultScramIterations;
};
// The decoy salt of `user`: HMAC-SHA-256(key, "<mechanism>,<user>"), 32 bytes.
std::string decoy_salt(const ScramDecoy& decoy, ScramMechanism m, std::string_view user);

// The server side of one exchange. Feed each client message to step(); the first answer is
// the server-first message, the second the server-final one. Any failure (unknown user, bad
// proof, malformed message, a nonce that does not extend ours) ends the exchange with an
// error text safe to send to the client; the text never says which check failed beyond
// "authentication failed" for a user or proof mismatch.
class ScramServer {
 public:
  using Lookup = std::function<std::optional<ScramCredential>(const std::string& user)>;
  ScramServer(ScramMechanism m, Lookup lookup, ScramDecoy decoy = {});
  // Tests only (known-answer vectors such as RFC 7677's): a fixed server nonce instead of a
  // random one. Never use outside tests: a predictable nonce allows replaying an exchange.
  ScramServer(ScramMechanism m, Lookup lookup, std::string fixed_nonce_for_testing);

  struct Step {
    std::string reply;                 // send to the client (empty on error)
    bool done = false;                 // the exchange succeeded: `user` is authenticated
    std::optional<std::string> error;  // the exchange failed
  };
  Step step(std::string_view client_message);

  // The authenticated user name (after a step with done == true), with SCRAM's =2C/=3D
  // escapes undone.
  const std::string& user() const { return user_; }

 private:
  enum class Stage { first, final, finished };
  ScramMechanism mechanism_;
  Lookup lookup_;
  Stage stage_ = Stage::first;
  std::string user_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string nonce_;  // client nonce + server nonce
  ScramCredential credential_;
  ScramDecoy decoy_;
  std::string gs2_header_;    // as the client sent it; client-final's c= must repeat it
  std::string server_nonce_;  // ours; random unless a test fixed it
  bool known_user_ = false;   // false: credential_ is a decoy, the final step fails

  Step fail(std::string error);
  Step on_client_first(std::string_view message);
  Step on_client_final(std::string_view message);
};

// The client side: first() → send; final(server_first) → send (nullopt if the server's
// message is malformed, its nonce does not extend ours or its iterations are below
// kMinScramIterations); verify(server_final) → true when the server proved it knows the key.
class ScramClient {
 public:
  ScramClient(ScramMechanism m, std::string user, std::string password);
  // Tests only (known-answer vectors): a fixed client nonce instead of a random one.
  ScramClient(ScramMechanism m, std::string user, std::string password, std::string fixed_nonce_for_testing);
  std::string first();
  std::optional<std::string> final(std::string_view server_first);
  bool verify(std::string_view server_final) const;

 private:
  ScramMechanism mechanism_;
  std::string user_;
  std::string password_;
  std::string nonce_;
  std::string client_first_bare_;
  std::string server_signature_;
};

// Constant-time comparison of secrets.
bool equal_secret(std::string_view a, std::string_view b);

}  // namespace brokerd::auth
