#include "brokerd/security/sasl_client.h"

#include <fmt/format.h>

#include "brokerd/auth/client_properties.h"
#include "brokerd/auth/plain.h"
#include "brokerd/auth/scram.h"
#include "brokerd/common/byte_text.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/messages/sasl_authenticate_request.h"
#include "brokerd/protocol/messages/sasl_authenticate_response.h"
#include "brokerd/protocol/messages/sasl_handshake_request.h"
#include "brokerd/protocol/messages/sasl_handshake_response.h"

namespace brokerd::security {

namespace {

template <typename Msg>
Bytes encode_body(const Msg& m, int16_t version) {
  protocol::Writer w;
  m.encode(w, version);
  return std::move(w).finish_bytes();
}

template <typename Msg>
Msg decode_body(const Bytes& body, int16_t version) {
  protocol::Reader r(body);
  Msg m;
  m.decode(r, version);
  return m;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

namespace {

// What this node trusts and presents on another node's TLS listener: that listener's trust
// store (the authority the nodes' certificates chain to) and its own key and certificate
// (for a listener that asks for client certificates), as Kafka's brokers do.
net::TlsClientSettings node_tls(const config::BrokerConfig& cfg, const std::string& listener) {
  net::TlsClientSettings tls;
  tls.ca_file = cfg.listener_setting(listener, "ssl.truststore.location");
  if (tls.ca_file.empty())
    throw config::ConfigError(fmt::format(
        "listener.name.{}.ssl.truststore.location: listener {} is {} and brokers connect to it, so this node needs "
        "the authority the other nodes' certificates chain to (a PEM file)", lower(listener), listener,
        security_protocol_name(cfg.security_protocol(listener))));
  tls.cert_file = tls.key_file = cfg.listener_setting(listener, "ssl.keystore.location");
  tls.key_password = cfg.listener_setting(listener, "ssl.key.password");
  const std::string check = cfg.listener_setting(listener, "ssl.endpoint.identification.algorithm");
  if (check != "https" && !check.empty())
    throw config::ConfigError(fmt::format("ssl.endpoint.identification.algorithm: 'https' or empty, not '{}'", check));
  tls.verify_hostname = check == "https";
  return tls;
}

}  // namespace

ClientCredentials node_credentials(const config::BrokerConfig& cfg, const std::string& listener,
                                   const std::string& mechanism_setting) {
  const SecurityProtocol protocol = cfg.security_protocol(listener);
  std::optional<net::TlsClientSettings> tls;
  if (protocol == SecurityProtocol::ssl || protocol == SecurityProtocol::sasl_ssl) tls = node_tls(cfg, listener);
  if (!uses_sasl(protocol)) {
    ClientCredentials plain;
    plain.tls = std::move(tls);
    return plain;
  }
  ClientCredentials c;
  c.tls = std::move(tls);
  c.mechanism = cfg.raw(mechanism_setting);
  if (c.mechanism != "PLAIN" && !auth::scram_mechanism(c.mechanism))
    throw config::ConfigError(fmt::format("{}: '{}' is not a mechanism brokerd speaks (PLAIN, SCRAM-SHA-256, "
                                          "SCRAM-SHA-512)", mechanism_setting, c.mechanism));
  const std::string suffix = lower(c.mechanism) + ".sasl.jaas.config";
  const std::string key = "listener.name." + lower(listener) + "." + suffix;
  const std::string jaas = cfg.listener_setting(listener, suffix);
  std::map<std::string, std::string> options;
  try {
    if (!jaas.empty()) options = auth::jaas_options(jaas);
  } catch (const std::invalid_argument& e) {
    throw config::ConfigError(fmt::format("{}: {}", key, e.what()));
  }
  auto user = options.find("username"), password = options.find("password");
  if (user == options.end() || password == options.end() || user->second.empty())
    throw config::ConfigError(fmt::format("{}: listener {} is {} and {} is {}, so this node needs username and "
                                          "password options there to connect to it", key, listener,
                                          security_protocol_name(cfg.security_protocol(listener)), mechanism_setting,
                                          c.mechanism));
  c.user = user->second;
  c.password = password->second;
  return c;
}

ClientCredentials credentials_from_properties(const std::map<std::string, std::string>& properties) {
  auto p = auth::parse_client_properties(properties);
  ClientCredentials c;
  c.mechanism = p.mechanism;
  c.user = p.user;
  c.password = p.password;
  if (p.tls) c.tls = net::TlsClientSettings{p.ca_file, p.cert_file, p.key_file, p.key_password, p.verify_hostname};
  return c;
}

SaslClientExchange::SaslClientExchange(ClientCredentials credentials) : credentials_(std::move(credentials)) {}
SaslClientExchange::~SaslClientExchange() = default;

SaslClientExchange::Request SaslClientExchange::first() {
  protocol::SaslHandshakeRequest hs;
  hs.mechanism = credentials_.mechanism;
  stage_ = Stage::handshake;
  return {protocol::SaslHandshakeRequest::api_key, kHandshakeVersion, encode_body(hs, kHandshakeVersion)};
}

SaslClientExchange::Request SaslClientExchange::authenticate(std::string token) {
  protocol::SaslAuthenticateRequest req;
  req.auth_bytes = bytes_of(token);
  return {protocol::SaslAuthenticateRequest::api_key, kAuthenticateVersion, encode_body(req, kAuthenticateVersion)};
}

std::optional<SaslClientExchange::Request> SaslClientExchange::next(const Bytes& response) {
  if (stage_ == Stage::handshake) {
    auto hs = decode_body<protocol::SaslHandshakeResponse>(response, kHandshakeVersion);
    if (hs.error_code != 0) {
      std::string offered;
      for (const auto& m : hs.mechanisms) offered += (offered.empty() ? "" : ", ") + m;
      throw AuthenticationError(fmt::format("SaslHandshake with {}: {}{}", credentials_.mechanism,
                                            protocol::error_name(static_cast<protocol::ErrorCode>(hs.error_code)),
                                            offered.empty() ? "" : " (the listener offers " + offered + ")"));
    }
    if (auto m = auth::scram_mechanism(credentials_.mechanism)) {
      scram_ = std::make_unique<auth::ScramClient>(*m, credentials_.user, credentials_.password);
      stage_ = Stage::scram_first;
      return authenticate(scram_->first());
    }
    stage_ = Stage::plain;
    return authenticate(auth::plain_token(credentials_.user, credentials_.password));
  }
  auto resp = decode_body<protocol::SaslAuthenticateResponse>(response, kAuthenticateVersion);
  if (resp.error_code != 0)
    throw AuthenticationError(fmt::format("{} as {}: {}{}", credentials_.mechanism, credentials_.user,
                                          protocol::error_name(static_cast<protocol::ErrorCode>(resp.error_code)),
                                          resp.error_message && !resp.error_message->empty()
                                              ? " (" + *resp.error_message + ")" : std::string()));
  const std::string reply = text_of(resp.auth_bytes);
  switch (stage_) {
    case Stage::plain:
      stage_ = Stage::done;
      return std::nullopt;
    case Stage::scram_first: {
      auto final_message = scram_->final(reply);
      if (!final_message) throw AuthenticationError("malformed SCRAM challenge");
      stage_ = Stage::scram_final;
      return authenticate(std::move(*final_message));
    }
    case Stage::scram_final:
      if (!scram_->verify(reply)) throw AuthenticationError("the server did not prove it knows the SCRAM credential");
      stage_ = Stage::done;
      return std::nullopt;
    default:
      throw AuthenticationError("SASL answer after the exchange ended");
  }
}

std::optional<std::string> authenticate(const ClientCredentials& credentials, const Call& call) {
  SaslClientExchange exchange(credentials);
  try {
    std::optional<SaslClientExchange::Request> req = exchange.first();
    while (req) {
      auto answer = call(req->api_key, req->version, req->body);
      if (!answer) return "the connection failed during authentication";
      req = exchange.next(*answer);
    }
  } catch (const AuthenticationError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("malformed SASL answer: ") + e.what();
  }
  return std::nullopt;
}

}  // namespace brokerd::security
