#include "tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "openssl_errors.h"
#include "subject_name.h"

namespace brokerd::net {

namespace ssl = boost::asio::ssl;

namespace {

constexpr int64_t kReloadCheckMs = 1000;

[[noreturn]] void fail(const TlsSettings& s, std::string_view what) {
  throw std::runtime_error(fmt::format("listener {}: {}", s.listener, what));
}

std::string read_file(const TlsSettings& s, const std::string& setting, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(s, fmt::format("{}: cannot read '{}'", setting, path));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};

// Every certificate of a PEM text joins the trust store and the list of authorities the
// server names when it asks for a client certificate.
void trust(const TlsSettings& s, SSL_CTX* ctx, const std::string& pem, const std::string& setting) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
  int count = 0;
  for (;;) {
    std::unique_ptr<X509, X509Free> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) break;
    ++count;
    if (X509_STORE_add_cert(store, cert.get()) != 1) {
      const unsigned long e = ERR_peek_last_error();
      if (ERR_GET_REASON(e) != X509_R_CERT_ALREADY_IN_HASH_TABLE) {
        sk_X509_NAME_pop_free(names, X509_NAME_free);
        fail(s, fmt::format("{}: {}", setting, openssl_errors()));
      }
    }
    sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(cert.get())));
  }
  ERR_clear_error();  // the end of the text reads as an error
  if (count == 0) {
    sk_X509_NAME_pop_free(names, X509_NAME_free);
    fail(s, fmt::format("{}: no PEM certificate found", setting));
  }
  SSL_CTX_set_client_CA_list(ctx, names);
}

// Splits ssl.cipher.suites into OpenSSL's TLS 1.3 suites and TLS 1.2 cipher list, accepting
// the IANA names Kafka's configurations use as well as OpenSSL's own.
std::pair<std::string, std::string> cipher_lists(const TlsSettings& s) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> all(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  SSL_CTX_set_cipher_list(all.get(), "ALL:COMPLEMENTOFALL");
  SSL_CTX_set_ciphersuites(all.get(),
                           "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:"
                           "TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256");
  STACK_OF(SSL_CIPHER)* known = SSL_CTX_get_ciphers(all.get());
  std::string tls13, tls12;
  for (const auto& name : s.cipher_suites) {
    const SSL_CIPHER* found = nullptr;
    for (int i = 0; i < sk_SSL_CIPHER_num(known) && !found; ++i) {
      const SSL_CIPHER* c = sk_SSL_CIPHER_value(known, i);
      const char* standard = SSL_CIPHER_standard_name(c);
      if (name == SSL_CIPHER_get_name(c) || (standard && name == standard)) found = c;
    }
    if (!found) fail(s, fmt::format("ssl.cipher.suites: '{}' is not a cipher suite this build of OpenSSL knows", name));
    std::string& list = std::string_view(SSL_CIPHER_get_version(found)) == "TLSv1.3" ? tls13 : tls12;
    if (!list.empty()) list += ':';
    list += SSL_CIPHER_get_name(found);
  }
  return {tls13, tls12};
}

}  // namespace

std::shared_ptr<TlsServerContext> TlsServerContext::make(TlsSettings settings) {
  return std::make_shared<TlsContextImpl>(std::move(settings));
}

TlsContextImpl::TlsContextImpl(TlsSettings settings) : TlsServerContext(std::move(settings)) {
  if (!settings_.tls12 && !settings_.tls13) fail(settings_, "ssl.enabled.protocols: neither TLSv1.2 nor TLSv1.3");
  ctx_ = build();
  stamps_ = stamps();
  next_check_ms_ = steady_clock_ms() + kReloadCheckMs;
}

std::shared_ptr<ssl::context> TlsContextImpl::build() const {
  const TlsSettings& s = settings_;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* c = ctx->native_handle();
  ERR_clear_error();
  SSL_CTX_set_options(c, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  auto [tls13, tls12] = cipher_lists(s);
  // Only TLS 1.3 suites named: TLS 1.2 has nothing left to offer.
  const bool tls12_on = s.tls12 && (s.cipher_suites.empty() || !tls12.empty());
  const bool tls13_on = s.tls13 && (s.cipher_suites.empty() || !tls13.empty());
  if (!tls12_on && !tls13_on) fail(s, "ssl.cipher.suites: no suite of an enabled protocol (ssl.enabled.protocols)");
  SSL_CTX_set_min_proto_version(c, tls12_on ? TLS1_2_VERSION : TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(c, tls13_on ? TLS1_3_VERSION : TLS1_2_VERSION);
  if (!s.cipher_suites.empty()) {
    if (SSL_CTX_set_ciphersuites(c, tls13.c_str()) != 1 || (!tls12.empty() && SSL_CTX_set_cipher_list(c, tls12.c_str()) != 1))
      fail(s, fmt::format("ssl.cipher.suites: {}", openssl_errors()));
  }
  if (!s.key_password.empty()) {
    ctx->set_password_callback([password = s.key_password](std::size_t, ssl::context::password_purpose) { return password; });
  }
  std::string key = s.key_pem, chain = s.chain_pem;
  std::string key_setting = "ssl.keystore.key", chain_setting = "ssl.keystore.certificate.chain";
  if (!s.keystore_location.empty()) {
    key = chain = read_file(s, "ssl.keystore.location", s.keystore_location);
    key_setting = chain_setting = "ssl.keystore.location";
  }
  if (key.empty() || chain.empty())
    fail(s, "no key and certificate: set ssl.keystore.location (a PEM file holding both), or ssl.keystore.key and "
            "ssl.keystore.certificate.chain");
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(chain), ec);
  if (ec) fail(s, fmt::format("{}: no usable certificate chain: {}", chain_setting, openssl_errors(ec)));
  ctx->use_private_key(boost::asio::buffer(key), ssl::context::pem, ec);
  if (ec) {
    fail(s, fmt::format("{}: no usable private key{}: {}", key_setting,
                        s.key_password.empty() ? " (an encrypted one needs ssl.key.password)" : "", openssl_errors(ec)));
  }
  if (SSL_CTX_check_private_key(c) != 1)
    fail(s, fmt::format("{}: the private key does not match the certificate", key_setting));

  std::string trusted = s.truststore_pem;
  std::string trust_setting = "ssl.truststore.certificates";
  if (!s.truststore_location.empty()) {
    trusted = read_file(s, "ssl.truststore.location", s.truststore_location);
    trust_setting = "ssl.truststore.location";
  }
  if (!trusted.empty()) trust(s, c, trusted, trust_setting);
  if (s.client_auth != ClientAuth::none && trusted.empty())
    fail(s, "ssl.client.auth asks for client certificates, but no trust store says which to accept "
            "(ssl.truststore.location or ssl.truststore.certificates)");
  switch (s.client_auth) {
    case ClientAuth::none: ctx->set_verify_mode(ssl::verify_none); break;
    case ClientAuth::requested: ctx->set_verify_mode(ssl::verify_peer); break;
    case ClientAuth::required: ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert); break;
  }
  // Session resumption with client certificates needs a context name.
  static constexpr unsigned char kSessionContext[] = "brokerd";
  SSL_CTX_set_session_id_context(c, kSessionContext, sizeof kSessionContext - 1);
  return ctx;
}

std::vector<TlsContextImpl::Stamp> TlsContextImpl::stamps() const {
  std::vector<Stamp> out;
  for (const auto* path : {&settings_.keystore_location, &settings_.truststore_location}) {
    Stamp st;
    std::error_code ec;
    if (!path->empty()) {
      st.mtime = std::filesystem::last_write_time(*path, ec);
      st.size = ec ? 0 : std::filesystem::file_size(*path, ec);
    }
    out.push_back(st);
  }
  return out;
}

std::shared_ptr<ssl::context> TlsContextImpl::current() {
  const int64_t now = steady_clock_ms();
  std::lock_guard lock(mu_);
  if (now < next_check_ms_) return ctx_;
  next_check_ms_ = now + kReloadCheckMs;
  auto fresh = stamps();
  if (fresh == stamps_) return ctx_;
  stamps_ = fresh;
  try {
    ctx_ = build();
    module_logger("net")->info("listener {}: key, certificates and trust store read again", settings_.listener);
  } catch (const std::exception& e) {
    module_logger("net")->error("{}; new connections keep the previous key and certificates", e.what());
  }
  return ctx_;
}

std::optional<std::string> peer_subject(SSL* ssl) {
  std::unique_ptr<X509, X509Free> cert(SSL_get1_peer_certificate(ssl));
  if (!cert) return std::nullopt;
  // Not OpenSSL's RFC 2253 printer: Kafka's principals are what Java writes, which names
  // attributes outside its keywords by OID and escapes '=' and '#' too.
  return java_rfc2253_name(X509_get_subject_name(cert.get()));
}

std::shared_ptr<boost::asio::ssl::context> handshake_context(TlsServerContext& tls) {
  return static_cast<TlsContextImpl&>(tls).current();
}

std::optional<std::string> certificate_subject(ssl_st* ssl) { return peer_subject(ssl); }

}  // namespace brokerd::net
