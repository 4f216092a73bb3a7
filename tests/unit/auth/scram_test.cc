#include "brokerd/auth/scram.h"
#include "brokerd/auth/base64.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

using namespace brokerd::auth;

namespace {

std::string from_hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// RFC 7677 section 3.
constexpr std::string_view kRfcClientNonce = "rOprNGfwEbeRWgbNEkqO";
constexpr std::string_view kRfcServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr std::string_view kRfcSaltHex = "5b6d99689d12358eeca04b141236fa81";  // W22ZaJ0SNY7soEsUEjb6gQ==
constexpr std::string_view kRfcClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr std::string_view kRfcServerFirst =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr std::string_view kRfcClientFinal =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr std::string_view kRfcServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

ScramCredential rfc_credential() {
  std::string salt = from_hex(kRfcSaltHex);
  return credential_from_salted(ScramMechanism::sha256, salt, salted_password(ScramMechanism::sha256, "pencil", salt, 4096),
                                4096);
}

// A server whose users are a map of credentials.
ScramServer::Lookup users(std::map<std::string, ScramCredential> creds) {
  return [creds = std::move(creds)](const std::string& user) -> std::optional<ScramCredential> {
    auto it = creds.find(user);
    if (it == creds.end()) return std::nullopt;
    return it->second;
  };
}

// One full exchange; true when both sides accept.
bool exchange(ScramMechanism m, const std::map<std::string, ScramCredential>& creds, const std::string& user,
              const std::string& password, std::string* authenticated = nullptr) {
  ScramServer server(m, users(creds));
  ScramClient client(m, user, password);
  auto first = server.step(client.first());
  if (first.error || first.done) return false;
  auto final = client.final(first.reply);
  if (!final) return false;
  auto last = server.step(*final);
  if (!last.done || last.error) return false;
  if (authenticated) *authenticated = server.user();
  return client.verify(last.reply);
}

}  // namespace

TEST(Scram, MechanismNamesAndCodes) {
  EXPECT_EQ(scram_mechanism("SCRAM-SHA-256"), ScramMechanism::sha256);
  EXPECT_EQ(scram_mechanism("SCRAM-SHA-512"), ScramMechanism::sha512);
  EXPECT_EQ(scram_mechanism("SCRAM-SHA-1"), std::nullopt);
  EXPECT_EQ(scram_mechanism("scram-sha-256"), std::nullopt);
  EXPECT_EQ(scram_mechanism(int8_t{1}), ScramMechanism::sha256);
  EXPECT_EQ(scram_mechanism(int8_t{2}), ScramMechanism::sha512);
  EXPECT_EQ(scram_mechanism(int8_t{0}), std::nullopt);
  EXPECT_EQ(scram_mechanism(int8_t{3}), std::nullopt);
  EXPECT_EQ(mechanism_name(ScramMechanism::sha256), "SCRAM-SHA-256");
  EXPECT_EQ(mechanism_name(ScramMechanism::sha512), "SCRAM-SHA-512");
}

TEST(Scram, Pbkdf2KnownAnswers) {
  // Computed with Python's hashlib.pbkdf2_hmac and checked against `openssl kdf ... PBKDF2`.
  EXPECT_EQ(to_hex(salted_password(ScramMechanism::sha512, "pencil", "saltSALTsaltSALT", 4096)),
            "20c381870846b0b26cfc918235875a5b3edf015fe0bf57bebbfb9c9941af594d"
            "3c6200510de3d67f369d07f4c391d8a14067e2c5b3566069cb5fecc52c050d6b");
  EXPECT_EQ(to_hex(salted_password(ScramMechanism::sha256, "pencil", from_hex(kRfcSaltHex), 4096)),
            "c4a49510323ab4f952cac1fa99441939e78ea74d6be81ddf7096e87513dc615d");
  EXPECT_THROW(salted_password(ScramMechanism::sha256, "pencil", "salt", 0), std::invalid_argument);
}

TEST(Scram, CredentialShape) {
  auto c = make_credential(ScramMechanism::sha512, "secret", 8192);
  EXPECT_EQ(c.mechanism, ScramMechanism::sha512);
  EXPECT_EQ(c.salt.size(), 32u);
  EXPECT_EQ(c.stored_key.size(), 64u);
  EXPECT_EQ(c.server_key.size(), 64u);
  EXPECT_EQ(c.iterations, 8192);
  EXPECT_NE(random_salt(), random_salt());
  auto again = credential_from_salted(ScramMechanism::sha512, c.salt,
                                      salted_password(ScramMechanism::sha512, "secret", c.salt, 8192), 8192);
  EXPECT_EQ(again.stored_key, c.stored_key);
  EXPECT_EQ(again.server_key, c.server_key);
}

TEST(Scram, EqualSecret) {
  EXPECT_TRUE(equal_secret("", ""));
  EXPECT_TRUE(equal_secret("abc", "abc"));
  EXPECT_FALSE(equal_secret("abc", "abd"));
  EXPECT_FALSE(equal_secret("abc", "ab"));
  EXPECT_TRUE(equal_secret(std::string_view("a\0b", 3), std::string_view("a\0b", 3)));
  EXPECT_FALSE(equal_secret(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

TEST(Scram, Rfc7677ServerVector) {
  ScramServer server(ScramMechanism::sha256, users({{"user", rfc_credential()}}), std::string(kRfcServerNonce));
  auto first = server.step(kRfcClientFirst);
  ASSERT_FALSE(first.error) << *first.error;
  EXPECT_FALSE(first.done);
  EXPECT_EQ(first.reply, kRfcServerFirst);
  auto last = server.step(kRfcClientFinal);
  ASSERT_FALSE(last.error) << *last.error;
  EXPECT_TRUE(last.done);
  EXPECT_EQ(last.reply, kRfcServerFinal);
  EXPECT_EQ(server.user(), "user");
}

TEST(Scram, Rfc7677ClientVector) {
  ScramClient client(ScramMechanism::sha256, "user", "pencil", std::string(kRfcClientNonce));
  EXPECT_EQ(client.first(), kRfcClientFirst);
  auto final = client.final(kRfcServerFirst);
  ASSERT_TRUE(final);
  EXPECT_EQ(*final, kRfcClientFinal);
  EXPECT_TRUE(client.verify(kRfcServerFinal));
  EXPECT_FALSE(client.verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4"));  // no padding
  EXPECT_FALSE(client.verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G5="));  // non-canonical last char
  EXPECT_FALSE(client.verify("v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="));
  EXPECT_FALSE(client.verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=="));
  EXPECT_FALSE(client.verify("v= 6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="));
  EXPECT_FALSE(client.verify("e=invalid-proof"));
  EXPECT_FALSE(client.verify(""));
}

TEST(Scram, RoundTripBothMechanisms) {
  for (auto m : {ScramMechanism::sha256, ScramMechanism::sha512}) {
    std::map<std::string, ScramCredential> creds{{"alice", make_credential(m, "alice-secret", 4096)}};
    std::string who;
    EXPECT_TRUE(exchange(m, creds, "alice", "alice-secret", &who)) << mechanism_name(m);
    EXPECT_EQ(who, "alice");
  }
}

TEST(Scram, WrongPasswordFails) {
  std::map<std::string, ScramCredential> creds{{"alice", make_credential(ScramMechanism::sha256, "right", 4096)}};
  ScramServer server(ScramMechanism::sha256, users(creds));
  ScramClient client(ScramMechanism::sha256, "alice", "wrong");
  auto first = server.step(client.first());
  ASSERT_FALSE(first.error);
  auto final = client.final(first.reply);
  ASSERT_TRUE(final);
  auto last = server.step(*final);
  EXPECT_FALSE(last.done);
  ASSERT_TRUE(last.error);
  EXPECT_NE(last.error->find("Authentication failed"), std::string::npos);
  EXPECT_TRUE(last.reply.empty());
  EXPECT_TRUE(server.user().empty());
}

TEST(Scram, MismatchedMechanismFails) {
  // A SHA-512 credential must not authenticate a SHA-256 exchange.
  std::map<std::string, ScramCredential> creds{{"alice", make_credential(ScramMechanism::sha512, "pw", 4096)}};
  EXPECT_FALSE(exchange(ScramMechanism::sha256, creds, "alice", "pw"));
}

TEST(Scram, UnknownUserFailsOnlyAtFinalStep) {
  std::map<std::string, ScramCredential> creds{{"alice", make_credential(ScramMechanism::sha256, "pw", 4096)}};
  ScramServer server(ScramMechanism::sha256, users(creds));
  ScramClient client(ScramMechanism::sha256, "mallory", "pw");
  auto first = server.step(client.first());
  ASSERT_FALSE(first.error);
  EXPECT_FALSE(first.done);
  auto final = client.final(first.reply);
  ASSERT_TRUE(final) << "the decoy server-first must look like a real one: " << first.reply;
  auto last = server.step(*final);
  EXPECT_FALSE(last.done);
  ASSERT_TRUE(last.error);
  EXPECT_EQ(*last.error, "Authentication failed: Invalid user credentials");

  // The decoy salt is stable for the same name, so two attempts do not give the user away.
  auto salt_of = [&](const std::string& user) {
    ScramServer s(ScramMechanism::sha256, users(creds), "fixed");
    auto reply = s.step("n,,n=" + user + ",r=abc").reply;
    auto at = reply.find(",s=");
    return reply.substr(at, reply.find(",i=") - at);
  };
  EXPECT_EQ(salt_of("mallory"), salt_of("mallory"));
  EXPECT_NE(salt_of("mallory"), salt_of("trudy"));
}

TEST(Scram, DecoyFollowsItsKeyAndIterations) {
  // The answer to an unknown user depends only on the decoy's key, the mechanism and the
  // name: a restarted node with the same key answers the same.
  auto first_of = [](const ScramDecoy& decoy, ScramMechanism m, const std::string& user) {
    ScramServer s(m, nullptr, decoy);
    return s.step("n,,n=" + user + ",r=abc").reply;
  };
  const ScramDecoy a{std::string(32, 'a')}, b{std::string(32, 'b')};
  EXPECT_EQ(a.iterations, kDefaultScramIterations);
  for (auto m : {ScramMechanism::sha256, ScramMechanism::sha512}) {
    const std::string reply = first_of(a, m, "mallory");
    EXPECT_NE(reply.find(",s=" + base64_encode(decoy_salt(a, m, "mallory")) + ",i=8192"), std::string::npos) << reply;
    EXPECT_EQ(decoy_salt(a, m, "mallory").size(), 32u);
    EXPECT_EQ(decoy_salt(a, m, "mallory"), decoy_salt(ScramDecoy{std::string(32, 'a')}, m, "mallory"));
    EXPECT_NE(decoy_salt(a, m, "mallory"), decoy_salt(b, m, "mallory"));
  }
  EXPECT_NE(decoy_salt(a, ScramMechanism::sha256, "mallory"), decoy_salt(a, ScramMechanism::sha512, "mallory"));
  const ScramDecoy fewer{std::string(32, 'a'), 4096};
  EXPECT_NE(first_of(fewer, ScramMechanism::sha256, "mallory").find(",i=4096"), std::string::npos);
}

TEST(Scram, NullLookupTreatsEveryoneAsUnknown) {
  ScramServer server(ScramMechanism::sha256, nullptr);
  ScramClient client(ScramMechanism::sha256, "alice", "pw");
  auto first = server.step(client.first());
  ASSERT_FALSE(first.error);
  auto last = server.step(*client.final(first.reply));
  EXPECT_TRUE(last.error);
}

TEST(Scram, TamperedNonceFails) {
  std::map<std::string, ScramCredential> creds{{"alice", make_credential(ScramMechanism::sha256, "pw", 4096)}};
  {
    // The client echoes a nonce other than the one the server chose.
    ScramServer server(ScramMechanism::sha256, users(creds));
    ScramClient client(ScramMechanism::sha256, "alice", "pw");
    auto first = server.step(client.first());
    auto final = client.final(first.reply);
    ASSERT_TRUE(final);
    std::string tampered = *final;
    auto r = tampered.find(",r=") + 3;
    tampered[r] = tampered[r] == 'x' ? 'y' : 'x';
    auto last = server.step(tampered);
    EXPECT_FALSE(last.done);
    EXPECT_TRUE(last.error);
  }
  {
    // The server's nonce does not extend the client's: the client refuses.
    ScramClient client(ScramMechanism::sha256, "alice", "pw", "clientnonce");
    client.first();
    EXPECT_FALSE(client.final("r=otherNONCEserver,s=QUJD,i=4096"));
    EXPECT_FALSE(client.final("r=clientnonce,s=QUJD,i=4096"));  // no server part at all
    EXPECT_TRUE(client.final("r=clientnonceSERVER,s=QUJD,i=4096"));
  }
}

TEST(Scram, ClientRefusesWeakOrMalformedServerFirst) {
  ScramClient client(ScramMechanism::sha256, "alice", "pw", "cn");
  EXPECT_FALSE(client.final("r=cnSN,s=QUJD,i=4096")) << "final() before first()";
  client.first();
  for (std::string_view bad : {"", "r=cnSN", "r=cnSN,s=QUJD", "r=cnSN,s=QUJD,i=4095", "r=cnSN,s=QUJD,i=-4096",
                               "r=cnSN,s=QUJD,i=+4096", "r=cnSN,s=QUJD,i=4096x", "r=cnSN,s=QUJD,i=99999999999",
                               "r=cnSN,s=QUJ,i=4096", "r=cnSN,s=Q!JD,i=4096", "r=cnSN,s=,i=4096",
                               "s=QUJD,r=cnSN,i=4096", "m=x,r=cnSN,s=QUJD,i=4096", "r=cnSN,s=QUJD,i=4096,bad"})
    EXPECT_FALSE(client.final(bad)) << bad;
  EXPECT_FALSE(client.verify("v=AAAA")) << "a failed final() forgets the expected signature";
}

TEST(Scram, EscapedUserNames) {
  for (std::string name : {"a,b", "a=b", "=2C", ",=,=", "héllo"}) {
    std::map<std::string, ScramCredential> creds{{name, make_credential(ScramMechanism::sha256, "pw", 4096)}};
    std::string who;
    EXPECT_TRUE(exchange(ScramMechanism::sha256, creds, name, "pw", &who)) << name;
    EXPECT_EQ(who, name);
  }
  ScramClient client(ScramMechanism::sha256, "a,b=c", "pw", "n1");
  EXPECT_EQ(client.first(), "n,,n=a=2Cb=3Dc,r=n1");

  std::string seen;
  ScramServer server(ScramMechanism::sha256, [&](const std::string& u) -> std::optional<ScramCredential> {
    seen = u;
    return std::nullopt;
  });
  EXPECT_FALSE(server.step("n,,n=x=2Cy=3Dz,r=abc").error);
  EXPECT_EQ(seen, "x,y=z");

  for (std::string_view bad : {"n,,n=a=2c,r=abc", "n,,n=a=,r=abc", "n,,n=a=2,r=abc", "n,,n=a=3Dx=41,r=abc", "n,,n=,r=abc"}) {
    ScramServer s(ScramMechanism::sha256, nullptr);
    EXPECT_TRUE(s.step(bad).error) << bad;
  }
}

TEST(Scram, Gs2HeaderAndExtensions) {
  auto first_ok = [](std::string_view msg) {
    ScramServer s(ScramMechanism::sha256, nullptr);
    return !s.step(msg).error;
  };
  EXPECT_TRUE(first_ok("n,,n=user,r=abc"));
  EXPECT_TRUE(first_ok("y,,n=user,r=abc"));
  EXPECT_TRUE(first_ok("n,a=user,n=user,r=abc"));
  EXPECT_TRUE(first_ok("n,,n=user,r=abc,foo=bar"));
  EXPECT_TRUE(first_ok("n,,n=user,r=abc,foo=bar,baz=1"));
  EXPECT_FALSE(first_ok("n,a=admin,n=user,r=abc"));
  EXPECT_FALSE(first_ok("p=tls-unique,,n=user,r=abc"));
  EXPECT_FALSE(first_ok("x,,n=user,r=abc"));
  EXPECT_FALSE(first_ok("n,b=user,n=user,r=abc"));
  EXPECT_FALSE(first_ok("n,,n=user,r=abc,tokenauth=true"));
  EXPECT_FALSE(first_ok("n,,m=ext,n=user,r=abc"));
  EXPECT_FALSE(first_ok("n,,n=user,r=abc,=novalue"));
  EXPECT_FALSE(first_ok("n,,n=user,r=abc,noequals"));
  EXPECT_FALSE(first_ok("n,,n=user,r=a b"));

  // "y,," travels as c=eSws, and the server checks that c= repeats the header it was sent.
  std::map<std::string, ScramCredential> creds{{"u", make_credential(ScramMechanism::sha256, "pw", 4096)}};
  ScramClient client(ScramMechanism::sha256, "u", "pw");
  std::string c_first = client.first();
  ScramServer server(ScramMechanism::sha256, users(creds));
  auto first = server.step("y" + c_first.substr(1));
  ASSERT_FALSE(first.error);
  auto final = client.final(first.reply);  // says c=biws
  ASSERT_TRUE(final);
  auto last = server.step(*final);
  EXPECT_TRUE(last.error);
}

TEST(Scram, StepAfterFinishedIsAnError) {
  ScramServer server(ScramMechanism::sha256, users({{"user", rfc_credential()}}), std::string(kRfcServerNonce));
  ASSERT_FALSE(server.step(kRfcClientFirst).error);
  ASSERT_TRUE(server.step(kRfcClientFinal).done);
  auto again = server.step(kRfcClientFinal);
  EXPECT_TRUE(again.error);
  EXPECT_FALSE(again.done);

  ScramServer failed(ScramMechanism::sha256, nullptr);
  EXPECT_TRUE(failed.step("garbage").error);
  EXPECT_TRUE(failed.step(kRfcClientFirst).error) << "a failed exchange stays failed";
}

TEST(Scram, MalformedClientFinal) {
  const std::string nonce = std::string(kRfcClientNonce) + std::string(kRfcServerNonce);
  for (std::string bad : {std::string(), std::string("nocommas"), std::string(","), std::string(",,"),
                          "c=biws,r=" + nonce, "c=biws,r=" + nonce + ",p=", "c=biws,r=" + nonce + ",p=!!!!",
                          "c=biws,r=" + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ",
                          "c=biws,r=" + nonce + ",p=QUJD", "c=bi,r=" + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
                          "c=eSws,r=" + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
                          "r=" + nonce + ",c=biws,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
                          "c=biws,r=" + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=,x=y",
                          "c=biws,r=" + nonce + ",bad,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="}) {
    ScramServer server(ScramMechanism::sha256, users({{"user", rfc_credential()}}), std::string(kRfcServerNonce));
    ASSERT_FALSE(server.step(kRfcClientFirst).error);
    auto s = server.step(bad);
    EXPECT_TRUE(s.error) << bad;
    EXPECT_FALSE(s.done);
    EXPECT_TRUE(s.reply.empty());
  }
  // Unknown extensions before the proof are ignored (but are part of the AuthMessage, so the
  // RFC proof no longer matches): the failure is an authentication failure, not a parse error.
  ScramServer server(ScramMechanism::sha256, users({{"user", rfc_credential()}}), std::string(kRfcServerNonce));
  ASSERT_FALSE(server.step(kRfcClientFirst).error);
  auto s = server.step("c=biws,r=" + nonce + ",foo=bar,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  ASSERT_TRUE(s.error);
  EXPECT_EQ(*s.error, "Authentication failed: Invalid user credentials");
}

TEST(Scram, RandomAndTruncatedInputsDoNotCrash) {
  std::mt19937 rng(12345);
  const std::string alphabet = "nyrpcsiav=,ABCxyz0189+/=\x01\xff ";
  std::vector<std::string> inputs = {"", ",", ",,", "n", "n,", "n,,", "n,,n", "n,,n=", "n,,n=u", "n,,n=u,",
                                     "n,,n=u,r", "n,,n=u,r=", "=", "==", "a=b=c", std::string(1, '\0'),
                                     std::string("n,,n=u\0x,r=abc", 14)};
  std::string full = std::string(kRfcClientFirst);
  for (size_t i = 0; i <= full.size(); ++i) inputs.push_back(full.substr(0, i));
  for (int i = 0; i < 2000; ++i) {
    std::string s(rng() % 40, ' ');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    inputs.push_back(s);
  }
  std::string final_msg = std::string(kRfcClientFinal);
  auto creds = users({{"u", make_credential(ScramMechanism::sha512, "pw", 4096)}});
  for (const auto& in : inputs) {
    ScramServer server(ScramMechanism::sha512, creds);
    auto s = server.step(in);
    if (!s.error) {
      // Got past the first step: throw the junk at the final step too.
      auto t = server.step(in);
      EXPECT_TRUE(t.error);
    }
  }
  for (size_t i = 0; i < final_msg.size(); ++i) {
    ScramServer server(ScramMechanism::sha256, users({{"user", rfc_credential()}}), std::string(kRfcServerNonce));
    ASSERT_FALSE(server.step(kRfcClientFirst).error);
    EXPECT_TRUE(server.step(final_msg.substr(0, i)).error) << i;
  }
  ScramClient client(ScramMechanism::sha256, "u", "pw");
  client.first();
  for (const auto& in : inputs) {
    EXPECT_FALSE(client.final(in)) << in;
    EXPECT_FALSE(client.verify(in));
  }
}

TEST(Base64, AppendMatchesEncodeForEveryLengthAndByte) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) bytes.push_back(static_cast<char>((i * 37 + 11) & 0xFF));
  for (size_t n = 0; n <= bytes.size(); ++n) {
    std::string out = "prefix";
    base64_append(out, std::string_view(bytes).substr(0, n));
    ASSERT_EQ(out, "prefix" + base64_encode(std::string_view(bytes).substr(0, n))) << n;
  }
  std::string out;
  base64_append(out, "any carnal pleas");
  EXPECT_EQ(out, "YW55IGNhcm5hbCBwbGVhcw==");
}
