#include "brokerd/security/principal_mapping.h"

#include <fmt/format.h>

#include <cctype>

#include "brokerd/config/broker_config.h"

namespace brokerd::security {

namespace {

constexpr std::string_view kSetting = "ssl.principal.mapping.rules";

[[noreturn]] void refuse(std::string_view rules, std::string_view why) {
  throw config::ConfigError(fmt::format("{}: {} in '{}'", kSetting, why, rules));
}

// Up to the next unescaped '/', the escapes kept (the pattern's regex reads them).
std::string take_part(std::string_view rules, size_t& at) {
  std::string out;
  while (at < rules.size() && rules[at] != '/') {
    if (rules[at] == '\\' && at + 1 < rules.size()) out += rules[at++];
    out += rules[at++];
  }
  if (at >= rules.size()) refuse(rules, "a RULE lacks its closing '/'");
  ++at;  // the '/'
  return out;
}

void skip_spaces(std::string_view s, size_t& at) {
  while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at]))) ++at;
}

}  // namespace

PrincipalMapping::PrincipalMapping(std::string_view rules) {
  size_t at = 0;
  skip_spaces(rules, at);
  while (at < rules.size()) {
    Rule rule;
    if (rules.substr(at).starts_with("DEFAULT")) {
      rule.is_default = true;
      at += 7;
    } else if (rules.substr(at).starts_with("RULE:")) {
      at += 5;
      const std::string pattern = take_part(rules, at);
      // A replacement says "\/" for a slash; the regex library's format string does not.
      std::string replacement = take_part(rules, at);
      for (size_t i = 0; i + 1 < replacement.size(); ++i)
        if (replacement[i] == '\\' && replacement[i + 1] == '/') replacement.erase(i, 1);
      if (at < rules.size() && (rules[at] == 'L' || rules[at] == 'U')) rule.case_change = rules[at++];
      try {
        rule.pattern = std::regex(pattern);
      } catch (const std::regex_error& e) {
        refuse(rules, fmt::format("pattern '{}' is not a regular expression ({})", pattern, e.what()));
      }
      rule.replacement = std::move(replacement);
    } else {
      refuse(rules, fmt::format("'{}' is neither DEFAULT nor RULE:pattern/replacement/", rules.substr(at)));
    }
    skip_spaces(rules, at);
    if (at < rules.size()) {
      if (rules[at] != ',') refuse(rules, fmt::format("unexpected '{}' after a rule", rules.substr(at)));
      ++at;
      skip_spaces(rules, at);
    }
    rules_.push_back(std::move(rule));
  }
  if (rules_.empty()) refuse(rules, "no rule");
}

std::optional<std::string> PrincipalMapping::user_of(const std::string& subject) const {
  for (const auto& rule : rules_) {
    if (rule.is_default) return subject;
    if (!std::regex_match(subject, rule.pattern)) continue;
    std::string name = std::regex_replace(subject, rule.pattern, rule.replacement);
    for (char& c : name) {
      if (rule.case_change == 'L') c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (rule.case_change == 'U') c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return name;
  }
  return std::nullopt;
}

}  // namespace brokerd::security
