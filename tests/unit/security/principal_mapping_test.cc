// ssl.principal.mapping.rules: parsing, the first rule that applies, case changes, refusal.
#include <gtest/gtest.h>

#include "brokerd/config/broker_config.h"
#include "brokerd/security/principal_mapping.h"

namespace brokerd::security {
namespace {

TEST(PrincipalMapping, DefaultKeepsTheSubject) {
  PrincipalMapping m;
  EXPECT_EQ(m.user_of("CN=alice,OU=eng,O=corp"), "CN=alice,OU=eng,O=corp");
}

TEST(PrincipalMapping, TheFirstRuleThatMatchesTheWholeSubjectWins) {
  PrincipalMapping m("RULE:^CN=([^,]+),OU=ServiceUsers.*$/svc-$1/, RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$2/L ,DEFAULT");
  EXPECT_EQ(m.user_of("CN=ingest,OU=ServiceUsers,O=corp"), "svc-ingest");
  EXPECT_EQ(m.user_of("CN=Alice,OU=ENG,O=corp"), "alice@eng");
  EXPECT_EQ(m.user_of("CN=x"), "CN=x");  // neither RULE matches the whole subject
}

TEST(PrincipalMapping, UpperCaseAndEscapedSlashes) {
  PrincipalMapping m(R"(RULE:^CN=(\w+)\/(\w+)$/$1\/$2/U)");
  EXPECT_EQ(m.user_of("CN=team/app"), "TEAM/APP");
}

TEST(PrincipalMapping, ASubjectNoRuleAppliesToHasNoPrincipal) {
  PrincipalMapping m("RULE:^CN=([^,]+),OU=eng$/$1/");
  EXPECT_EQ(m.user_of("CN=bob,OU=eng"), "bob");
  EXPECT_FALSE(m.user_of("CN=bob,OU=sales"));
}

TEST(PrincipalMapping, MalformedRulesAreRefusedByName) {
  for (const char* bad : {"RULE:^CN=(.*)$/$1", "RULE:^CN=(.*$/$1/", "DEFAULT;RULE", "", "RULES:x/y/"}) {
    try {
      PrincipalMapping m(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const config::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("ssl.principal.mapping.rules"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace brokerd::security
