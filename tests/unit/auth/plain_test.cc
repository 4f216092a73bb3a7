#include "brokerd/auth/plain.h"

#include <gtest/gtest.h>

using namespace brokerd::auth;

namespace {

// The message of the std::invalid_argument `jaas` throws, or "" if it parses.
std::string jaas_error(std::string_view jaas) {
  try {
    jaas_options(jaas);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string token(std::string_view a, std::string_view u, std::string_view p) {
  std::string t(a);
  t.push_back('\0');
  t.append(u);
  t.push_back('\0');
  t.append(p);
  return t;
}

}  // namespace

TEST(Jaas, KafkaExample) {
  auto users = plain_users_from_jaas(
      "org.apache.kafka.common.security.plain.PlainLoginModule required\n"
      "  username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" user_alice=\"alice-secret\";");
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(users.at("admin"), "admin-secret");
  EXPECT_EQ(users.at("alice"), "alice-secret");

  auto options = jaas_options(
      "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"pw\";");
  ASSERT_EQ(options.size(), 2u);
  EXPECT_EQ(options.at("username"), "admin");
  EXPECT_EQ(options.at("password"), "pw");
}

TEST(Jaas, WhitespaceFlagsAndEscapes) {
  auto options = jaas_options(
      "\n\t  com.example.Module\n\toptional\r\n  a = \"x\"\n  b=\"\"  c=\"say \\\"hi\\\" \\\\ ok\"\n  d=\"semi;colon = eq\"\n;\n\n");
  ASSERT_EQ(options.size(), 4u);
  EXPECT_EQ(options.at("a"), "x");
  EXPECT_EQ(options.at("b"), "");
  EXPECT_EQ(options.at("c"), "say \"hi\" \\ ok");
  EXPECT_EQ(options.at("d"), "semi;colon = eq");

  for (std::string_view flag : {"required", "requisite", "sufficient", "optional", "REQUIRED", "Optional"})
    EXPECT_EQ(jaas_error("M " + std::string(flag) + ";"), "") << flag;
  EXPECT_TRUE(jaas_options("M required;").empty());
  EXPECT_TRUE(jaas_options("M required ;").empty());
  EXPECT_TRUE(plain_users_from_jaas("M required username=\"a\";").empty());
}

TEST(Jaas, UserNamesKeepTheirCharacters) {
  auto users = plain_users_from_jaas("M required user_alice.smith=\"p1\" user_user_x=\"p2\" user_b=\"with \\\"quote\";");
  ASSERT_EQ(users.size(), 3u);
  EXPECT_EQ(users.at("alice.smith"), "p1");
  EXPECT_EQ(users.at("user_x"), "p2");
  EXPECT_EQ(users.at("b"), "with \"quote");
}

TEST(Jaas, BadInputs) {
  struct Case {
    std::string_view text;
    std::string_view expect;  // a piece of the message
  };
  for (auto [text, expect] : std::initializer_list<Case>{
           {"", "login module"},
           {"   \n ", "login module"},
           {";", "login module"},
           {"M", "control flag"},
           {"M ;", "control flag"},
           {"M mandatory;", "unknown control flag 'mandatory'"},
           {"M required", "missing ';'"},
           {"M required a=\"x\"", "missing ';'"},
           {"M required a;", "expected '=' after option 'a'"},
           {"M required a=;", "double-quoted value for option 'a'"},
           {"M required a=x;", "double-quoted value for option 'a'"},
           {"M required a=\"x;", "unterminated quoted value for option 'a'"},
           {"M required a=\"x\\", "unterminated"},
           {"M required a=\"x\\n\";", "unsupported escape"},
           {"M required =\"x\";", "expected an option name"},
           {"M required \"x\";", "expected an option name"},
           {"M required a=\"1\" a=\"2\";", "option 'a' given twice"},
           {"M required; N required;", "only one login module"},
           {"M required;x", "only one login module"},
       }) {
    std::string err = jaas_error(text);
    EXPECT_NE(err.find(expect), std::string::npos) << "input: " << text << "\nmessage: " << err;
    EXPECT_NE(err.find("JAAS"), std::string::npos) << err;
  }
  EXPECT_THROW(plain_users_from_jaas("M required user_=\"x\";"), std::invalid_argument);
  EXPECT_THROW(plain_users_from_jaas("M required user_a=\"x\""), std::invalid_argument);
}

TEST(Plain, ParsesTokens) {
  auto t = parse_plain(token("", "alice", "secret"));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->authzid, "");
  EXPECT_EQ(t->user, "alice");
  EXPECT_EQ(t->password, "secret");

  t = parse_plain(token("alice", "alice", "pw with spaces,and=stuff"));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->authzid, "alice");
  EXPECT_EQ(t->password, "pw with spaces,and=stuff");
}

TEST(Plain, RefusesBadTokens) {
  EXPECT_FALSE(parse_plain(""));
  EXPECT_FALSE(parse_plain("alice"));
  EXPECT_FALSE(parse_plain(std::string("alice\0secret", 12)));
  EXPECT_FALSE(parse_plain(std::string(2, '\0')));
  EXPECT_FALSE(parse_plain(token("", "", "secret")));
  EXPECT_FALSE(parse_plain(token("", "alice", "")));
  EXPECT_FALSE(parse_plain(token("bob", "alice", "secret")));
  EXPECT_FALSE(parse_plain(token("", "alice", "sec") + std::string(1, '\0') + "ret"));
  EXPECT_FALSE(parse_plain(std::string(3, '\0')));
}

TEST(Plain, BuildsTokensThatParse) {
  std::string t = plain_token("alice", "secret");
  EXPECT_EQ(t, token("", "alice", "secret"));
  auto parsed = parse_plain(t);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->user, "alice");
  EXPECT_EQ(parsed->password, "secret");
}
