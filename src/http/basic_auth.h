#pragma once
// HTTP Basic authentication (http.authentication=basic) against the SCRAM credentials kept
// in the metadata log (brokerctl users): the password is salted and hashed as SCRAM does
// (PBKDF2 with the credential's salt and iterations, on the blocking pool, never a reactor)
// and its stored key compared with the credential's. A password that matched is remembered
// (as a keyed hash, never in clear) while the user's credential stays the same, so a client
// on keep-alive pays the hashing once.
#include <boost/asio/awaitable.hpp>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace brokerd::metadata { class MetadataStore; }
namespace brokerd::net { class BlockingPool; }

namespace brokerd::http {

class BasicAuthenticator {
 public:
  BasicAuthenticator(const metadata::MetadataStore& metadata, net::BlockingPool& blocking);

  // "User:NAME" for a valid `Authorization: Basic ...` header, nullopt otherwise.
  boost::asio::awaitable<std::optional<std::string>> principal_of(std::string_view authorization);

 private:
  struct Remembered {
    std::string password_digest;  // keyed hash of the password that matched
    std::string stored_key;       // of the credential it matched
  };
  const metadata::MetadataStore& metadata_;
  net::BlockingPool& blocking_;
  const std::string digest_key_;
  std::mutex mu_;
  std::map<std::string, Remembered, std::less<>> remembered_;
};

}  // namespace brokerd::http
