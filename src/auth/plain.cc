#include "brokerd/auth/plain.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace brokerd::auth {
namespace {

// A hand-written scanner over one JAAS entry:
//   <module> <flag> [<key>="<value>"]... ;
class JaasParser {
 public:
  explicit JaasParser(std::string_view text) : text_(text) {}

  std::map<std::string, std::string> parse() {
    skip_space();
    std::string module = word();
    if (module.empty()) fail("expected a login module class name");
    skip_space();
    std::string flag = word();
    if (flag.empty()) fail("expected a control flag (required, requisite, sufficient or optional) after '" + module + "'");
    if (!is_control_flag(flag))
      fail("unknown control flag '" + flag + "' (expected required, requisite, sufficient or optional)");

    std::map<std::string, std::string> options;
    for (;;) {
      skip_space();
      if (at_end()) fail("missing ';' at the end of the entry");
      if (peek() == ';') {
        ++pos_;
        break;
      }
      std::string key = word();
      if (key.empty()) fail(std::string("unexpected '") + peek() + "', expected an option name or ';'");
      skip_space();
      if (at_end() || peek() != '=') fail("expected '=' after option '" + key + "'");
      ++pos_;
      skip_space();
      if (at_end() || peek() != '"') fail("expected a double-quoted value for option '" + key + "'");
      std::string value = quoted(key);
      if (!options.emplace(key, std::move(value)).second) fail("option '" + key + "' given twice");
    }
    skip_space();
    if (!at_end()) fail("unexpected text after ';' (only one login module is allowed)");
    return options;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument("invalid JAAS config at offset " + std::to_string(pos_) + ": " + why);
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(peek()))) ++pos_;
  }

  // A bare token: class names and option keys, up to whitespace or syntax characters.
  std::string word() {
    size_t start = pos_;
    while (!at_end()) {
      char c = peek();
      if (std::isspace(static_cast<unsigned char>(c)) || c == '=' || c == ';' || c == '"' || c == '\0') break;
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  // A "..." value with \" and \\ escapes; pos_ is at the opening quote.
  std::string quoted(const std::string& key) {
    ++pos_;
    std::string out;
    while (!at_end()) {
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c == '\\') {
        if (at_end()) break;
        char e = text_[pos_++];
        if (e != '"' && e != '\\') {
          --pos_;
          fail(std::string("unsupported escape '\\") + e + "' in the value of '" + key + "' (only \\\" and \\\\)");
        }
        c = e;
      }
      out.push_back(c);
    }
    fail("unterminated quoted value for option '" + key + "'");
  }

  static bool is_control_flag(std::string_view flag) {
    // Case-insensitive, like Kafka's JaasConfig.
    static constexpr std::array<std::string_view, 4> kFlags = {"required", "requisite", "sufficient", "optional"};
    return std::any_of(kFlags.begin(), kFlags.end(), [&](std::string_view f) {
      return f.size() == flag.size() && std::equal(f.begin(), f.end(), flag.begin(), [](char a, char b) {
               return a == std::tolower(static_cast<unsigned char>(b));
             });
    });
  }
};

}  // namespace

std::map<std::string, std::string> jaas_options(std::string_view jaas) { return JaasParser(jaas).parse(); }

std::map<std::string, std::string> plain_users_from_jaas(std::string_view jaas) {
  constexpr std::string_view kPrefix = "user_";
  std::map<std::string, std::string> users;
  for (auto& [key, value] : jaas_options(jaas)) {
    if (!key.starts_with(kPrefix)) continue;
    std::string user = key.substr(kPrefix.size());
    if (user.empty()) throw std::invalid_argument("invalid JAAS config: option 'user_' names no user");
    users.emplace(std::move(user), value);
  }
  return users;
}

std::optional<PlainToken> parse_plain(std::string_view token) {
  size_t first = token.find('\0');
  if (first == std::string_view::npos) return std::nullopt;
  size_t second = token.find('\0', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  if (token.find('\0', second + 1) != std::string_view::npos) return std::nullopt;
  PlainToken t;
  t.authzid = std::string(token.substr(0, first));
  t.user = std::string(token.substr(first + 1, second - first - 1));
  t.password = std::string(token.substr(second + 1));
  if (t.user.empty() || t.password.empty()) return std::nullopt;
  if (!t.authzid.empty() && t.authzid != t.user) return std::nullopt;
  return t;
}

std::string plain_token(std::string_view user, std::string_view password) {
  std::string out;
  out.reserve(user.size() + password.size() + 2);
  out.push_back('\0');
  out.append(user);
  out.push_back('\0');
  out.append(password);
  return out;
}

}  // namespace brokerd::auth
