#pragma once
// TLS on a listener (SSL and SASL_SSL): the settings, and the server context built from them.
// The context rereads its key, certificate chain and trust store when their files change,
// so a renewed certificate is served to new connections without a restart.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct ssl_st;
namespace boost::asio::ssl { class context; }

namespace brokerd::net {

enum class ClientAuth { none, requested, required };

struct TlsSettings {
  std::string listener;  // for messages
  // The private key and its certificate chain, PEM: one file holding both, or the two texts.
  std::string keystore_location;
  std::string key_pem;
  std::string chain_pem;
  std::string key_password;  // of an encrypted private key
  // The certificates client certificates must chain to, PEM: a file, or the text.
  std::string truststore_location;
  std::string truststore_pem;
  ClientAuth client_auth = ClientAuth::none;
  bool tls12 = true;
  bool tls13 = true;
  // IANA names (TLS_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) or OpenSSL's;
  // empty: OpenSSL's defaults.
  std::vector<std::string> cipher_suites;
  // A client that has not finished its handshake after this long is disconnected.
  std::chrono::milliseconds handshake_timeout{10000};
  // The principal of a client that presented a certificate, from its subject in RFC 2253
  // form (CN=alice,OU=eng); nullopt refuses the client. Unset: User:<subject>.
  std::function<std::optional<std::string>(const std::string& subject)> principal_of;
};

class TlsServerContext {
 public:
  // Throws std::runtime_error naming what is wrong (a missing file, a key that does not
  // match its certificate, an unknown cipher suite).
  static std::shared_ptr<TlsServerContext> make(TlsSettings settings);
  virtual ~TlsServerContext() = default;
  const TlsSettings& settings() const { return settings_; }

 protected:
  explicit TlsServerContext(TlsSettings s) : settings_(std::move(s)) {}
  TlsSettings settings_;
};

// For a server of another module on the same settings (the HTTP API's https listeners): the
// context a new connection handshakes with (its files read again when they changed), and the
// subject of the certificate the client presented after the handshake, in RFC 2253 form as
// Java writes it (nullopt when it presented none).
std::shared_ptr<boost::asio::ssl::context> handshake_context(TlsServerContext& tls);
std::optional<std::string> certificate_subject(ssl_st* ssl);

}  // namespace brokerd::net
