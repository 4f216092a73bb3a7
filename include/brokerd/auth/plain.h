#pragma once
// SASL PLAIN (RFC 4616) with Kafka's static user list: the
// `listener.name.<listener>.plain.sasl.jaas.config` setting, a JAAS entry such as
//   org.apache.kafka.common.security.plain.PlainLoginModule required
//     username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";
// whose user_<name>="<password>" options are the accepted credentials.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace brokerd::auth {

// user name → password. Throws std::invalid_argument with a readable message when the text
// is not a JAAS entry (login module name, `required|requisite|sufficient|optional`, then
// key="value" options, a closing ';').
std::map<std::string, std::string> plain_users_from_jaas(std::string_view jaas);

// The options of a JAAS entry, all of them (username, password, user_*), in the same syntax.
std::map<std::string, std::string> jaas_options(std::string_view jaas);

struct PlainToken {
  std::string authzid;  // empty unless the client asked to act as someone (must equal user)
  std::string user;
  std::string password;
};
// "authzid\0user\0password"; nullopt when malformed (wrong field count, empty user or password,
// an authzid that differs from the user, which Kafka refuses as well).
std::optional<PlainToken> parse_plain(std::string_view token);
std::string plain_token(std::string_view user, std::string_view password);

}  // namespace brokerd::auth
