#pragma once
// ssl.principal.mapping.rules, as Kafka reads them: a comma-separated list of
//   DEFAULT                          the certificate subject as it is
//   RULE:pattern/replacement/[LU]    when `pattern` matches the whole subject, the subject
//                                    with `replacement` ($1, $2 for its groups), then lower
//                                    (L) or upper (U) cased
// tried in order; the first that applies names the user. A subject no rule applies to has no
// principal, and its client is refused.
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace brokerd::security {

class PrincipalMapping {
 public:
  // Throws config::ConfigError naming what does not parse.
  explicit PrincipalMapping(std::string_view rules = "DEFAULT");

  // The user name for a certificate subject in RFC 2253 form (CN=alice,OU=eng,O=corp).
  std::optional<std::string> user_of(const std::string& subject) const;

 private:
  struct Rule {
    bool is_default = false;
    std::regex pattern;
    std::string replacement;
    char case_change = 0;  // 'L', 'U' or 0
  };
  std::vector<Rule> rules_;
};

}  // namespace brokerd::security
