#pragma once
// The client side of SASL, for this node's own connections to other nodes — to their
// controller listener (quorum peers, registration and heartbeats, forwarded changes) and to
// their inter-broker listener (replica fetchers) — and for mirror links to a source cluster.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "brokerd/common/bytes.h"
#include "brokerd/net/client_stream.h"

namespace brokerd::config { class BrokerConfig; }
namespace brokerd::auth { class ScramClient; }

namespace brokerd::security {

struct ClientCredentials {
  std::string mechanism;  // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; empty: no SASL
  std::string user;
  std::string password;
  std::optional<net::TlsClientSettings> tls;  // SSL, SASL_SSL: the connection is TLS
  bool enabled() const { return !mechanism.empty(); }
};

// What this node presents to `listener` of another node. TLS on an SSL or SASL_SSL listener:
// the listener's ssl.truststore.location says whom to trust, its ssl.keystore.location is
// presented when asked, its ssl.endpoint.identification.algorithm says whether names are
// checked. SASL on a SASL_* listener: `mechanism` (sasl.mechanism.controller.protocol or
// sasl.mechanism.inter.broker.protocol) with the username and password options of the
// listener's JAAS entry for it (listener.name.<listener>.plain.sasl.jaas.config, or
// .scram-sha-256.sasl.jaas.config, ...), as Kafka reads them. Throws config::ConfigError
// naming the setting that is missing.
ClientCredentials node_credentials(const config::BrokerConfig& cfg, const std::string& listener,
                                   const std::string& mechanism_setting);

// The credentials of a Kafka client's properties (auth::parse_client_properties).
ClientCredentials credentials_from_properties(const std::map<std::string, std::string>& properties);

// A refused exchange: the server's message, or what the client found wrong.
class AuthenticationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One exchange as the requests it takes: SaslHandshake v1, then SaslAuthenticate v2 steps
// (one for PLAIN, two for SCRAM, whose last answer must prove the server knows the key).
class SaslClientExchange {
 public:
  static constexpr int16_t kHandshakeVersion = 1;
  static constexpr int16_t kAuthenticateVersion = 2;
  struct Request {
    int16_t api_key = 0;
    int16_t version = 0;
    Bytes body;  // without the request header
  };

  explicit SaslClientExchange(ClientCredentials credentials);
  ~SaslClientExchange();

  Request first();
  // The answer (its body) to the last request: the next request, or nullopt once
  // authenticated. Throws AuthenticationError when refused, protocol::DecodeError when the
  // answer does not parse.
  std::optional<Request> next(const Bytes& response);

 private:
  Request authenticate(std::string token);

  ClientCredentials credentials_;
  enum class Stage { start, handshake, plain, scram_first, scram_final, done } stage_ = Stage::start;
  std::unique_ptr<auth::ScramClient> scram_;
};

// The whole exchange over `call`, which sends a request body and returns the answer's body
// (nullopt when the connection failed). nullopt once authenticated, else why not.
using Call = std::function<std::optional<Bytes>(int16_t api_key, int16_t version, const Bytes& body)>;
std::optional<std::string> authenticate(const ClientCredentials& credentials, const Call& call);

}  // namespace brokerd::security
