#include "http/basic_auth.h"

#include <openssl/crypto.h>

#include "brokerd/auth/base64.h"
#include "brokerd/auth/scram.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/net/blocking_pool.h"

namespace brokerd::http {

namespace asio = boost::asio;

namespace {

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// A keyed, cheap hash of the password: one PBKDF2 round with this process's random key.
std::string digest(std::string_view key, std::string_view password) {
  return auth::salted_password(auth::ScramMechanism::sha256, password, key, 1);
}

}  // namespace

BasicAuthenticator::BasicAuthenticator(const metadata::MetadataStore& metadata, net::BlockingPool& blocking)
    : metadata_(metadata), blocking_(blocking), digest_key_(auth::random_bytes(32)) {}

asio::awaitable<std::optional<std::string>> BasicAuthenticator::principal_of(std::string_view authorization) {
  constexpr std::string_view kScheme = "Basic ";
  if (authorization.size() <= kScheme.size()) co_return std::nullopt;
  std::string scheme(authorization.substr(0, kScheme.size()));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "basic ") co_return std::nullopt;
  std::string_view encoded = authorization.substr(kScheme.size());
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  auto decoded = auth::base64_decode(encoded);
  if (!decoded) co_return std::nullopt;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos || colon == 0) co_return std::nullopt;
  const std::string user = decoded->substr(0, colon);
  const std::string password = decoded->substr(colon + 1);

  // The user's strongest credential.
  const auto image = metadata_.image();
  const auto found = image->scram_credentials->find(user);
  if (found == image->scram_credentials->end() || found->second.empty()) co_return std::nullopt;
  const auth::ScramCredential credential = found->second.rbegin()->second;
  const std::string mine = digest(digest_key_, password);
  {
    std::lock_guard lock(mu_);
    auto it = remembered_.find(user);
    if (it != remembered_.end() && same(it->second.stored_key, credential.stored_key) &&
        same(it->second.password_digest, mine))
      co_return "User:" + user;
  }
  auto check = [credential, password] {
    const auto salted = auth::salted_password(credential.mechanism, password, credential.salt, credential.iterations);
    const auto derived = auth::credential_from_salted(credential.mechanism, credential.salt, salted, credential.iterations);
    return same(derived.stored_key, credential.stored_key);
  };
  const bool ok = co_await blocking_.run(std::move(check));
  if (!ok) co_return std::nullopt;
  {
    std::lock_guard lock(mu_);
    remembered_[user] = Remembered{mine, credential.stored_key};
  }
  co_return "User:" + user;
}

}  // namespace brokerd::http
