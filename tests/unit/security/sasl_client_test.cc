// The client side of SASL against hand-made answers: the requests it sends in order, what a
// refusal says, and the client properties it accepts.
#include "brokerd/security/sasl_client.h"

#include <gtest/gtest.h>

#include "brokerd/common/byte_text.h"
#include "brokerd/protocol/messages/sasl_authenticate_request.h"
#include "brokerd/protocol/messages/sasl_authenticate_response.h"
#include "brokerd/protocol/messages/sasl_handshake_request.h"
#include "brokerd/protocol/messages/sasl_handshake_response.h"

namespace brokerd::security {
namespace {

template <typename Msg>
Bytes encode(const Msg& m, int16_t v) {
  protocol::Writer w;
  m.encode(w, v);
  return std::move(w).finish_bytes();
}

template <typename Msg>
Msg decode(const Bytes& b, int16_t v) {
  protocol::Reader r(b);
  Msg m;
  m.decode(r, v);
  return m;
}

Bytes handshake_answer(int16_t error, std::vector<std::string> mechanisms) {
  protocol::SaslHandshakeResponse r;
  r.error_code = error;
  r.mechanisms = std::move(mechanisms);
  return encode(r, SaslClientExchange::kHandshakeVersion);
}

Bytes authenticate_answer(int16_t error, std::string message = {}) {
  protocol::SaslAuthenticateResponse r;
  r.error_code = error;
  if (!message.empty()) r.error_message = message;
  return encode(r, SaslClientExchange::kAuthenticateVersion);
}

TEST(SaslClientExchange, PlainIsAHandshakeThenOneToken) {
  SaslClientExchange x({"PLAIN", "broker", "secret"});
  auto first = x.first();
  ASSERT_EQ(first.api_key, 17);
  EXPECT_EQ(decode<protocol::SaslHandshakeRequest>(first.body, first.version).mechanism, "PLAIN");
  auto token = x.next(handshake_answer(0, {"PLAIN"}));
  ASSERT_TRUE(token);
  ASSERT_EQ(token->api_key, 36);
  const auto auth = decode<protocol::SaslAuthenticateRequest>(token->body, token->version);
  EXPECT_EQ(text_of(auth.auth_bytes), std::string("\0broker\0secret", 14));
  EXPECT_FALSE(x.next(authenticate_answer(0)));
}

TEST(SaslClientExchange, RefusalsSayWhy) {
  SaslClientExchange refused_mechanism({"SCRAM-SHA-256", "broker", "secret"});
  refused_mechanism.first();
  try {
    refused_mechanism.next(handshake_answer(33, {"PLAIN"}));
    FAIL() << "an unsupported mechanism was accepted";
  } catch (const AuthenticationError& e) {
    EXPECT_NE(std::string(e.what()).find("UNSUPPORTED_SASL_MECHANISM"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("offers PLAIN"), std::string::npos) << e.what();
  }
  SaslClientExchange wrong_password({"PLAIN", "broker", "guess"});
  wrong_password.first();
  wrong_password.next(handshake_answer(0, {"PLAIN"}));
  try {
    wrong_password.next(authenticate_answer(58, "Invalid username or password"));
    FAIL() << "a refused password was accepted";
  } catch (const AuthenticationError& e) {
    EXPECT_NE(std::string(e.what()).find("SASL_AUTHENTICATION_FAILED"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Invalid username or password"), std::string::npos) << e.what();
  }
}

TEST(SaslClientExchange, AScramServerThatCannotProveItselfIsRefused) {
  SaslClientExchange x({"SCRAM-SHA-256", "broker", "secret"});
  x.first();
  auto client_first = x.next(handshake_answer(0, {"SCRAM-SHA-256"}));
  ASSERT_TRUE(client_first);
  // A challenge whose nonce does not extend the client's: refused before any proof is sent.
  protocol::SaslAuthenticateResponse challenge;
  challenge.auth_bytes = bytes_of("r=not-the-clients-nonce,s=c2FsdA==,i=4096");
  EXPECT_THROW(x.next(encode(challenge, SaslClientExchange::kAuthenticateVersion)), AuthenticationError);
}

TEST(ClientProperties, KafkasNamesAndLibrdkafkasAreRead) {
  EXPECT_FALSE(credentials_from_properties({}).enabled());
  EXPECT_FALSE(credentials_from_properties({{"client.id", "x"}}).enabled());
  auto c = credentials_from_properties({{"security.protocol", "SASL_PLAINTEXT"},
                                        {"sasl.mechanism", "SCRAM-SHA-512"},
                                        {"sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule "
                                                             "required username=\"m\" password=\"p\";"}});
  EXPECT_EQ(c.mechanism, "SCRAM-SHA-512");
  EXPECT_EQ(c.user, "m");
  EXPECT_EQ(c.password, "p");
  c = credentials_from_properties({{"security.protocol", "SASL_PLAINTEXT"}, {"sasl.username", "u"},
                                   {"sasl.password", "p"}});
  EXPECT_EQ(c.mechanism, "PLAIN");  // Kafka's default, GSSAPI, is not spoken
  EXPECT_THROW(credentials_from_properties({{"security.protocol", "SASL_PLAINTEXT"}, {"sasl.username", "u"}}),
               std::invalid_argument);
  EXPECT_THROW(credentials_from_properties({{"security.protocol", "TLS"}}), std::invalid_argument);
  EXPECT_THROW(credentials_from_properties({{"security.protocol", "SSL"}, {"ssl.keystore.type", "JKS"}}),
               std::invalid_argument);
  EXPECT_THROW(credentials_from_properties({{"security.protocol", "SASL_PLAINTEXT"}, {"sasl.mechanism", "GSSAPI"},
                                            {"sasl.username", "u"}, {"sasl.password", "p"}}),
               std::invalid_argument);
}

TEST(ClientProperties, TlsInKafkasFormAndLibrdkafkas) {
  auto c = credentials_from_properties({{"security.protocol", "SSL"}, {"ssl.ca.location", "/ca.pem"},
                                        {"ssl.certificate.location", "/me.crt"}, {"ssl.key.location", "/me.key"}});
  ASSERT_TRUE(c.tls);
  EXPECT_FALSE(c.enabled());  // no SASL
  EXPECT_EQ(c.tls->ca_file, "/ca.pem");
  EXPECT_EQ(c.tls->cert_file, "/me.crt");
  EXPECT_EQ(c.tls->key_file, "/me.key");
  EXPECT_TRUE(c.tls->verify_hostname);
  c = credentials_from_properties({{"security.protocol", "SASL_SSL"}, {"ssl.truststore.type", "PEM"},
                                   {"ssl.truststore.location", "/ca.pem"}, {"ssl.keystore.location", "/me.pem"},
                                   {"ssl.endpoint.identification.algorithm", ""}, {"sasl.username", "u"},
                                   {"sasl.password", "p"}});
  ASSERT_TRUE(c.tls);
  EXPECT_EQ(c.tls->cert_file, "/me.pem");
  EXPECT_EQ(c.tls->key_file, "/me.pem");
  EXPECT_FALSE(c.tls->verify_hostname);
  EXPECT_EQ(c.mechanism, "PLAIN");
  // TLS settings without a TLS protocol change nothing.
  EXPECT_FALSE(credentials_from_properties({{"ssl.ca.location", "/ca.pem"}}).tls);
  EXPECT_THROW(credentials_from_properties({{"security.protocol", "SSL"}, {"ssl.key.location", "/k"}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace brokerd::security
