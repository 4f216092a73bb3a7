#include "brokerd/auth/scram.h"

#include "brokerd/auth/base64.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <charconv>
#include <climits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace brokerd::auth {
namespace {

constexpr size_t kSaltBytes = 32;
constexpr size_t kNonceBytes = 32;
constexpr std::string_view kAuthFailed = "Authentication failed: Invalid user credentials";

const EVP_MD* digest(ScramMechanism m) { return m == ScramMechanism::sha512 ? EVP_sha512() : EVP_sha256(); }
size_t digest_size(ScramMechanism m) { return static_cast<size_t>(EVP_MD_get_size(digest(m))); }

std::string hash(ScramMechanism m, std::string_view data) {
  std::string out(EVP_MAX_MD_SIZE, '\0');
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), &len, digest(m), nullptr) != 1)
    throw std::runtime_error("SCRAM: digest failed");
  out.resize(len);
  return out;
}

std::string hmac(ScramMechanism m, std::string_view key, std::string_view data) {
  if (key.size() > INT_MAX) throw std::invalid_argument("SCRAM: HMAC key too long");
  std::string out(EVP_MAX_MD_SIZE, '\0');
  unsigned int len = 0;
  if (!HMAC(digest(m), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
            data.size(), reinterpret_cast<unsigned char*>(out.data()), &len))
    throw std::runtime_error("SCRAM: HMAC failed");
  out.resize(len);
  return out;
}

std::string random_nonce() { return base64_encode(random_bytes(kNonceBytes)); }

// RFC 5802 printable: %x21-2B / %x2D-7E (no ',').
bool valid_nonce(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < 0x21 || c > 0x7e || c == ',') return false;
  return true;
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
}

// "k=value" with the expected one-letter key; nullopt otherwise.
std::optional<std::string_view> attribute(std::string_view part, char key) {
  if (part.size() < 2 || part[0] != key || part[1] != '=') return std::nullopt;
  return part.substr(2);
}

// Undo saslname escapes (=2C → ',', =3D → '='); nullopt for any other '=' or a NUL.
std::optional<std::string> unescape_saslname(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\0') return std::nullopt;
    if (c != '=') {
      out.push_back(c);
      continue;
    }
    std::string_view esc = s.substr(i + 1, 2);
    if (esc == "2C")
      out.push_back(',');
    else if (esc == "3D")
      out.push_back('=');
    else
      return std::nullopt;
    i += 2;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string escape_saslname(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == ',')
      out += "=2C";
    else if (c == '=')
      out += "=3D";
    else
      out.push_back(c);
  }
  return out;
}

std::optional<int32_t> parse_iterations(std::string_view s) {
  int32_t value = 0;
  if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || value <= 0) return std::nullopt;
  return value;
}

// Kafka's extensions after the nonce: key=value with a non-empty key.
bool valid_extension(std::string_view part) {
  size_t eq = part.find('=');
  return eq != std::string_view::npos && eq > 0;
}

std::string xor_bytes(std::string_view a, std::string_view b) {
  std::string out(a.size(), '\0');
  for (size_t i = 0; i < a.size(); ++i) out[i] = static_cast<char>(a[i] ^ b[i]);
  return out;
}

}  // namespace

std::string decoy_salt(const ScramDecoy& decoy, ScramMechanism m, std::string_view user) {
  static const std::string process_key = random_bytes(32);
  const std::string& key = decoy.key.empty() ? process_key : decoy.key;
  std::string salt = hmac(ScramMechanism::sha256, key, std::string(mechanism_name(m)) + ',' + std::string(user));
  salt.resize(kSaltBytes);
  return salt;
}

std::optional<ScramMechanism> scram_mechanism(std::string_view name) {
  if (name == "SCRAM-SHA-256") return ScramMechanism::sha256;
  if (name == "SCRAM-SHA-512") return ScramMechanism::sha512;
  return std::nullopt;
}

std::optional<ScramMechanism> scram_mechanism(int8_t code) {
  if (code == static_cast<int8_t>(ScramMechanism::sha256)) return ScramMechanism::sha256;
  if (code == static_cast<int8_t>(ScramMechanism::sha512)) return ScramMechanism::sha512;
  return std::nullopt;
}

std::string_view mechanism_name(ScramMechanism m) {
  return m == ScramMechanism::sha512 ? "SCRAM-SHA-512" : "SCRAM-SHA-256";
}

std::string salted_password(ScramMechanism m, std::string_view password, std::string_view salt, int32_t iterations) {
  if (iterations < 1) throw std::invalid_argument("SCRAM: iterations must be positive");
  if (password.size() > INT_MAX || salt.size() > INT_MAX) throw std::invalid_argument("SCRAM: password or salt too long");
  std::string out(digest_size(m), '\0');
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()), static_cast<int>(salt.size()), iterations,
                        digest(m), static_cast<int>(out.size()), reinterpret_cast<unsigned char*>(out.data())) != 1)
    throw std::runtime_error("SCRAM: PBKDF2 failed");
  return out;
}

ScramCredential credential_from_salted(ScramMechanism m, std::string_view salt, std::string_view salted,
                                       int32_t iterations) {
  ScramCredential c;
  c.mechanism = m;
  c.salt = std::string(salt);
  c.stored_key = hash(m, hmac(m, salted, "Client Key"));
  c.server_key = hmac(m, salted, "Server Key");
  c.iterations = iterations;
  return c;
}

std::string random_salt() { return random_bytes(kSaltBytes); }

ScramCredential make_credential(ScramMechanism m, std::string_view password, int32_t iterations) {
  std::string salt = random_salt();
  return credential_from_salted(m, salt, salted_password(m, password, salt, iterations), iterations);
}

bool equal_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// ---- server ----

ScramServer::ScramServer(ScramMechanism m, Lookup lookup, ScramDecoy decoy)
    : mechanism_(m), lookup_(std::move(lookup)), decoy_(std::move(decoy)), server_nonce_(random_nonce()) {}

ScramServer::ScramServer(ScramMechanism m, Lookup lookup, std::string fixed_nonce_for_testing)
    : mechanism_(m), lookup_(std::move(lookup)), server_nonce_(std::move(fixed_nonce_for_testing)) {}

ScramServer::Step ScramServer::fail(std::string error) {
  stage_ = Stage::finished;
  user_.clear();
  Step s;
  s.error = std::move(error);
  return s;
}

ScramServer::Step ScramServer::step(std::string_view client_message) {
  switch (stage_) {
    case Stage::first:
      return on_client_first(client_message);
    case Stage::final:
      return on_client_final(client_message);
    case Stage::finished:
      break;
  }
  return fail("SCRAM exchange already finished");
}

ScramServer::Step ScramServer::on_client_first(std::string_view message) {
  // gs2-header: cbind-flag "," [a=authzid] ","
  size_t c1 = message.find(',');
  size_t c2 = c1 == std::string_view::npos ? c1 : message.find(',', c1 + 1);
  if (c2 == std::string_view::npos) return fail("Invalid SCRAM client-first message: no GS2 header");
  std::string_view cbind = message.substr(0, c1);
  std::string_view authz = message.substr(c1 + 1, c2 - c1 - 1);
  if (cbind.starts_with("p=")) return fail("SCRAM channel binding is not supported");
  if (cbind != "n" && cbind != "y") return fail("Invalid SCRAM client-first message: bad channel binding flag");
  std::optional<std::string> authzid;
  if (!authz.empty()) {
    auto value = attribute(authz, 'a');
    if (!value) return fail("Invalid SCRAM client-first message: bad authorization id");
    authzid = unescape_saslname(*value);
    if (!authzid) return fail("Invalid SCRAM client-first message: bad authorization id");
  }

  std::string_view bare = message.substr(c2 + 1);
  auto parts = split_commas(bare);
  if (parts[0].starts_with("m=")) return fail("SCRAM mandatory extensions are not supported");
  if (parts.size() < 2) return fail("Invalid SCRAM client-first message: expected n= and r=");
  auto name = attribute(parts[0], 'n');
  auto nonce = attribute(parts[1], 'r');
  if (!name || !nonce) return fail("Invalid SCRAM client-first message: expected n= and r=");
  auto user = unescape_saslname(*name);
  if (!user) return fail("Invalid SCRAM client-first message: bad user name");
  if (!valid_nonce(*nonce)) return fail("Invalid SCRAM client-first message: bad nonce");
  for (size_t i = 2; i < parts.size(); ++i) {
    if (!valid_extension(parts[i])) return fail("Invalid SCRAM client-first message: bad extension");
    if (parts[i].starts_with("tokenauth=")) return fail("SCRAM delegation token authentication is not supported");
  }
  if (authzid && *authzid != *user) return fail("SCRAM authorization id must be the authenticated user");

  user_ = std::move(*user);
  gs2_header_ = std::string(message.substr(0, c2 + 1));
  client_first_bare_ = std::string(bare);
  nonce_ = std::string(*nonce) + server_nonce_;

  std::optional<ScramCredential> found;
  if (lookup_) found = lookup_(user_);
  known_user_ = found && found->mechanism == mechanism_ && found->stored_key.size() == digest_size(mechanism_) &&
                found->iterations > 0;
  if (known_user_) {
    credential_ = std::move(*found);
  } else {
    // Answer as if the user existed; the final step fails.
    credential_ = ScramCredential{mechanism_, decoy_salt(decoy_, mechanism_, user_),
                                  std::string(digest_size(mechanism_), '\0'), std::string(digest_size(mechanism_), '\0'),
                                  decoy_.iterations};
  }

  server_first_ = "r=" + nonce_ + ",s=" + base64_encode(credential_.salt) + ",i=" + std::to_string(credential_.iterations);
  stage_ = Stage::final;
  Step s;
  s.reply = server_first_;
  return s;
}

ScramServer::Step ScramServer::on_client_final(std::string_view message) {
  // c=<b64 gs2 header>,r=<nonce>[,extensions],p=<b64 proof>
  auto parts = split_commas(message);
  if (parts.size() < 3) return fail("Invalid SCRAM client-final message");
  auto channel = attribute(parts[0], 'c');
  auto nonce = attribute(parts[1], 'r');
  auto proof_b64 = attribute(parts.back(), 'p');
  if (!channel || !nonce || !proof_b64) return fail("Invalid SCRAM client-final message");
  for (size_t i = 2; i + 1 < parts.size(); ++i)
    if (!valid_extension(parts[i])) return fail("Invalid SCRAM client-final message: bad extension");
  auto gs2 = base64_decode(*channel);
  if (!gs2 || *gs2 != gs2_header_) return fail("Invalid SCRAM client-final message: channel binding mismatch");
  // Kafka accepts a nonce that ends with ours, and librdkafka 2.0 repeats its own nonce in
  // front of ours: accept it too. The proof covers the message as sent, so nothing is lost.
  if (!nonce->ends_with(nonce_)) return fail("Invalid client nonce in the SCRAM client-final message");
  auto proof = base64_decode(*proof_b64);
  if (!proof || proof->size() != digest_size(mechanism_)) return fail("Invalid SCRAM client-final message: bad proof");

  std::string_view without_proof = message.substr(0, message.size() - parts.back().size() - 1);
  std::string auth_message = client_first_bare_ + "," + server_first_ + "," + std::string(without_proof);
  // Check the proof even for a decoy credential, so both paths cost the same.
  std::string client_signature = hmac(mechanism_, credential_.stored_key, auth_message);
  std::string client_key = xor_bytes(*proof, client_signature);
  bool proof_ok = equal_secret(hash(mechanism_, client_key), credential_.stored_key);
  if (!proof_ok || !known_user_) return fail(std::string(kAuthFailed));

  stage_ = Stage::finished;
  Step s;
  s.reply = "v=" + base64_encode(hmac(mechanism_, credential_.server_key, auth_message));
  s.done = true;
  return s;
}

// ---- client ----

ScramClient::ScramClient(ScramMechanism m, std::string user, std::string password)
    : mechanism_(m), user_(std::move(user)), password_(std::move(password)), nonce_(random_nonce()) {}

ScramClient::ScramClient(ScramMechanism m, std::string user, std::string password, std::string fixed_nonce_for_testing)
    : mechanism_(m), user_(std::move(user)), password_(std::move(password)), nonce_(std::move(fixed_nonce_for_testing)) {}

std::string ScramClient::first() {
  client_first_bare_ = "n=" + escape_saslname(user_) + ",r=" + nonce_;
  server_signature_.clear();
  return "n,," + client_first_bare_;
}

std::optional<std::string> ScramClient::final(std::string_view server_first) {
  server_signature_.clear();
  if (client_first_bare_.empty()) return std::nullopt;
  // r=<nonce>,s=<b64 salt>,i=<iterations>[,extensions]
  auto parts = split_commas(server_first);
  if (parts.size() < 3) return std::nullopt;
  auto nonce = attribute(parts[0], 'r');
  auto salt_b64 = attribute(parts[1], 's');
  auto iter_text = attribute(parts[2], 'i');
  if (!nonce || !salt_b64 || !iter_text) return std::nullopt;
  if (!valid_nonce(*nonce) || nonce->size() <= nonce_.size() || !nonce->starts_with(nonce_)) return std::nullopt;
  auto salt = base64_decode(*salt_b64);
  auto iterations = parse_iterations(*iter_text);
  if (!salt || salt->empty() || !iterations || *iterations < kMinScramIterations) return std::nullopt;
  for (size_t i = 3; i < parts.size(); ++i)
    if (!valid_extension(parts[i])) return std::nullopt;

  std::string without_proof = "c=biws,r=" + std::string(*nonce);
  std::string auth_message = client_first_bare_ + "," + std::string(server_first) + "," + without_proof;
  std::string salted = salted_password(mechanism_, password_, *salt, *iterations);
  std::string client_key = hmac(mechanism_, salted, "Client Key");
  std::string stored_key = hash(mechanism_, client_key);
  std::string proof = xor_bytes(client_key, hmac(mechanism_, stored_key, auth_message));
  server_signature_ = hmac(mechanism_, hmac(mechanism_, salted, "Server Key"), auth_message);
  return without_proof + ",p=" + base64_encode(proof);
}

bool ScramClient::verify(std::string_view server_final) const {
  if (server_signature_.empty()) return false;
  // Only "v=..." proves the server; "e=..." (or anything else) is a refusal.
  auto parts = split_commas(server_final);
  auto value = attribute(parts[0], 'v');
  if (!value) return false;
  auto signature = base64_decode(*value);
  return signature && equal_secret(*signature, server_signature_);
}

}  // namespace brokerd::auth
