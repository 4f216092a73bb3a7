#include "brokerctl/args.h"

#include <charconv>

namespace brokerctl {

const std::vector<OptionSpec>& global_options() {
  static const std::vector<OptionSpec> kGlobal = {
      {"bootstrap-server", "HOST:PORT[,...]", "brokers to connect to, the first that answers (env BROKERCTL_BOOTSTRAP, default localhost:9092)"},
      {"output", "table|json", "output format (default table)"},
      {"timeout-ms", "MS", "network timeout per request (default 30000)"},
      {"command-config", "FILE", "client properties: security.protocol, ssl.ca.location, ssl.certificate.location, ssl.key.location, sasl.mechanism, sasl.username, sasl.password (or sasl.jaas.config)"},
      {"help", "", "show this help"},
  };
  return kGlobal;
}

std::optional<int64_t> parse_int(std::string_view text, int64_t min, int64_t max) {
  int64_t v = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (!text.empty() && text[0] == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < min || v > max) return std::nullopt;
  return v;
}

std::optional<std::string> Args::get(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::all(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::vector<std::pair<std::string, std::string>> Args::key_values(std::string_view name, std::string_view form) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& kv : all(name)) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--" + std::string(name) + " takes " + std::string(form) + ", not '" + kv + "'");
    out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return out;
}

std::optional<int64_t> Args::get_int(std::string_view name, int64_t min, int64_t max) const {
  auto text = get(name);
  if (!text) return std::nullopt;
  auto v = parse_int(*text, min, max);
  if (!v) {
    throw UsageError("--" + std::string(name) + " must be an integer between " + std::to_string(min) +
                     " and " + std::to_string(max) + ", got '" + *text + "'");
  }
  return v;
}

Args parse_args(const std::vector<OptionSpec>& options, const std::vector<std::string>& positional_names,
                size_t optional_positionals, const std::vector<std::string>& argv) {
  auto find = [&](std::string_view name) -> const OptionSpec* {
    for (const auto& o : options) if (o.name == name) return &o;
    for (const auto& o : global_options()) if (o.name == name) return &o;
    return nullptr;
  };
  Args args;
  bool only_positionals = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (only_positionals || a.size() < 2 || a.rfind("--", 0) != 0) {
      if (!only_positionals && a.size() > 1 && a[0] == '-' && !parse_int(a, INT64_MIN, INT64_MAX)) {
        throw UsageError("unknown option '" + a + "'");
      }
      args.positionals_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positionals = true;
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name.resize(eq);
    }
    const OptionSpec* spec = find(name);
    if (!spec) throw UsageError("unknown option '--" + name + "'");
    auto& slot = args.values_[name];
    if (spec->value_name.empty()) {
      if (inline_value) throw UsageError("option '--" + name + "' takes no value");
      slot.push_back("");
      continue;
    }
    if (!slot.empty() && !spec->repeatable) throw UsageError("option '--" + name + "' given twice");
    if (inline_value) {
      slot.push_back(*inline_value);
    } else if (i + 1 < argv.size()) {
      slot.push_back(argv[++i]);
    } else {
      throw UsageError("option '--" + name + "' needs a value (" + spec->value_name + ")");
    }
  }
  if (args.flag("help")) return args;
  size_t required = positional_names.size() - optional_positionals;
  if (args.positionals_.size() < required) {
    throw UsageError("missing argument " + positional_names[args.positionals_.size()]);
  }
  if (args.positionals_.size() > positional_names.size()) {
    throw UsageError("unexpected argument '" + args.positionals_[positional_names.size()] + "'");
  }
  return args;
}

}  // namespace brokerctl
