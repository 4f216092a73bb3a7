#pragma once
// Command-line parsing for brokerctl: each command declares its options and positional
// arguments; the global options (bootstrap server, output format, timeout) are accepted by
// every command, before or after the command words.
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>
#include <utility>

namespace brokerctl {

// A mistake on the command line: exit code 2, one line on stderr.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Anything else that went wrong (network, a Kafka error): exit code 1.
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;        // without the leading "--"
  std::string value_name;  // empty for a flag
  std::string help;
  bool repeatable = false;
};

class Args {
 public:
  bool flag(std::string_view name) const { return values_.count(std::string(name)) > 0; }
  std::optional<std::string> get(std::string_view name) const;
  std::vector<std::string> all(std::string_view name) const;
  // Every --NAME KEY=VALUE, split; a value without '=' is a usage error saying `form`.
  std::vector<std::pair<std::string, std::string>> key_values(std::string_view name, std::string_view form) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

  // Numbers are checked here so a bad one is a usage error naming the option.
  std::optional<int64_t> get_int(std::string_view name, int64_t min, int64_t max) const;

 private:
  friend Args parse_args(const std::vector<OptionSpec>&, const std::vector<std::string>&,
                         size_t, const std::vector<std::string>&);
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_;
};

// Parses `argv` (the command words removed) against `options` plus the global options.
// `positional_names` are required, in order; more positionals than named are refused.
Args parse_args(const std::vector<OptionSpec>& options, const std::vector<std::string>& positional_names,
                size_t optional_positionals, const std::vector<std::string>& argv);

const std::vector<OptionSpec>& global_options();

// Parses a whole decimal integer within [min, max]; nullopt when it is not one.
std::optional<int64_t> parse_int(std::string_view text, int64_t min, int64_t max);

}  // namespace brokerctl
