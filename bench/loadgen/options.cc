#include "options.h"

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <functional>
#include <stdexcept>
#include <string_view>

namespace loadgen {
namespace {

using Setter = std::function<void(Options&, const std::string&)>;

struct Option {
  const char* name;      // flag without "--", and workload key
  const char* arg;       // nullptr: a switch taking no value on the command line
  const char* help;
  Setter set;
};

[[noreturn]] void bad(std::string_view name, std::string_view value, std::string_view why) {
  throw std::runtime_error(fmt::format("--{}={}: {}", name, value, why));
}

int64_t to_int(std::string_view name, const std::string& v, int64_t lo, int64_t hi) {
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0) bad(name, v, "not an integer");
  if (x < lo || x > hi) bad(name, v, fmt::format("must be in [{}, {}]", lo, hi));
  return x;
}

double to_double(std::string_view name, const std::string& v, double lo) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0') bad(name, v, "not a number");
  if (x < lo) bad(name, v, fmt::format("must be at least {}", lo));
  return x;
}

bool to_bool(std::string_view name, const std::string& v) {
  if (v == "true" || v == "1" || v == "yes" || v.empty()) return true;
  if (v == "false" || v == "0" || v == "no") return false;
  bad(name, v, "not a boolean");
}

std::pair<std::string, std::string> to_prop(std::string_view name, const std::string& v) {
  auto eq = v.find('=');
  if (eq == std::string::npos || eq == 0) bad(name, v, "expected KEY=VALUE");
  return {v.substr(0, eq), v.substr(eq + 1)};
}

const std::vector<Option>& table() {
  static const std::vector<Option> options = {
      {"bootstrap", "HOST:PORT", "brokers to connect to",
       [](Options& o, const std::string& v) { o.bootstrap = v; }},
      {"topic", "NAME", "topic to use; created if missing",
       [](Options& o, const std::string& v) { o.topic = v; }},
      {"partitions", "N", "partitions of a created topic",
       [](Options& o, const std::string& v) { o.partitions = int(to_int("partitions", v, 1, 100000)); }},
      {"replication-factor", "N", "replication factor of a created topic",
       [](Options& o, const std::string& v) { o.replication_factor = int(to_int("replication-factor", v, 1, 100)); }},
      {"mode", "produce|consume|both", "what to run",
       [](Options& o, const std::string& v) {
         if (v == "produce") o.mode = Mode::produce;
         else if (v == "consume") o.mode = Mode::consume;
         else if (v == "both") o.mode = Mode::both;
         else bad("mode", v, "expected produce, consume or both");
       }},
      {"producers", "N", "producer threads, one client each",
       [](Options& o, const std::string& v) { o.producers = int(to_int("producers", v, 0, 1024)); }},
      {"consumers", "N", "consumer threads, one client each",
       [](Options& o, const std::string& v) { o.consumers = int(to_int("consumers", v, 0, 1024)); }},
      {"record-size", "BYTES", "value size of each record (>= 12)",
       [](Options& o, const std::string& v) { o.record_size = int(to_int("record-size", v, 12, 100 << 20)); }},
      {"keys", "N", "distinct keys, chosen at random; 0 sends null keys",
       [](Options& o, const std::string& v) { o.keys = to_int("keys", v, 0, INT64_MAX); }},
      {"acks", "0|1|all", "producer acks",
       [](Options& o, const std::string& v) {
         if (v != "0" && v != "1" && v != "all" && v != "-1") bad("acks", v, "expected 0, 1 or all");
         o.acks = v == "-1" ? "all" : v;
       }},
      {"compression", "none|gzip|snappy|lz4|zstd", "producer compression",
       [](Options& o, const std::string& v) {
         if (v != "none" && v != "gzip" && v != "snappy" && v != "lz4" && v != "zstd")
           bad("compression", v, "expected none, gzip, snappy, lz4 or zstd");
         o.compression = v;
       }},
      {"rate", "RECORDS/S", "target rate over all producers, paced; 0 = as fast as possible",
       [](Options& o, const std::string& v) { o.rate = to_double("rate", v, 0); }},
      {"duration", "SECONDS", "how long to produce (or consume, with --mode consume)",
       [](Options& o, const std::string& v) { o.duration_s = to_double("duration", v, 0.1); }},
      {"records", "N", "stop producing after N records over all producers (--duration still bounds the run); 0 = no limit",
       [](Options& o, const std::string& v) { o.records = to_int("records", v, 0, INT64_MAX); }},
      {"warmup", "SECONDS", "first seconds left out of the final figures",
       [](Options& o, const std::string& v) { o.warmup_s = to_double("warmup", v, 0); }},
      {"linger-ms", "MS", "producer linger.ms",
       [](Options& o, const std::string& v) { o.linger_ms = to_double("linger-ms", v, 0); }},
      {"batch-size", "BYTES", "producer batch.size",
       [](Options& o, const std::string& v) { o.batch_size = int(to_int("batch-size", v, 1, 1 << 30)); }},
      {"max-in-flight", "N", "producer requests in flight per connection",
       [](Options& o, const std::string& v) { o.max_in_flight = int(to_int("max-in-flight", v, 1, 1000000)); }},
      {"transactional-id", "PREFIX", "transactional producers: producer i uses transactional.id PREFIX-i and "
       "sends inside transactions (needs acks=all)",
       [](Options& o, const std::string& v) { o.transactional_id = v; }},
      {"commit-interval-ms", "MS", "with --transactional-id: each transaction lasts this long, then is committed (default 100)",
       [](Options& o, const std::string& v) { o.commit_interval_ms = to_double("commit-interval-ms", v, 1); }},
      {"group", "ID", "consumers join this consumer group instead of assigning partitions",
       [](Options& o, const std::string& v) { o.group = v; }},
      {"from-beginning", nullptr, "consumers start at the log start instead of the end",
       [](Options& o, const std::string& v) { o.from_beginning = to_bool("from-beginning", v); }},
      {"drain", "SECONDS", "after producing stops, wait up to this long for consumers to catch up",
       [](Options& o, const std::string& v) { o.drain_s = to_double("drain", v, 0); }},
      {"json", nullptr, "print the final figures as one JSON object",
       [](Options& o, const std::string& v) { o.json = to_bool("json", v); }},
      {"quiet", nullptr, "no per-second progress lines",
       [](Options& o, const std::string& v) { o.progress = !to_bool("quiet", v); }},
      {"mock-brokers", "N", "run against librdkafka's in-process mock cluster of N brokers",
       [](Options& o, const std::string& v) { o.mock_brokers = int(to_int("mock-brokers", v, 0, 16)); }},
      {"client-prop", "KEY=VALUE", "extra librdkafka setting of every client, admin steps included (repeatable): "
       "security.protocol, ssl.ca.location, sasl.*",
       [](Options& o, const std::string& v) { o.client_props.push_back(to_prop("client-prop", v)); }},
      {"producer-prop", "KEY=VALUE", "extra librdkafka producer setting (repeatable)",
       [](Options& o, const std::string& v) { o.producer_props.push_back(to_prop("producer-prop", v)); }},
      {"consumer-prop", "KEY=VALUE", "extra librdkafka consumer setting (repeatable)",
       [](Options& o, const std::string& v) { o.consumer_props.push_back(to_prop("consumer-prop", v)); }},
  };
  return options;
}

const Option* find(std::string_view name) {
  for (const auto& o : table())
    if (name == o.name) return &o;
  return nullptr;
}

void print_help() {
  fmt::print(
      "brokerd-load: produce and/or consume against a Kafka-compatible broker and report\n"
      "throughput and latency percentiles.\n\n"
      "usage: brokerd-load [--workload FILE] [--OPTION VALUE | --OPTION=VALUE ...]\n\n"
      "  --workload FILE  a YAML map of the options below (without --); flags override it\n");
  for (const auto& o : table()) {
    std::string flag = fmt::format("--{}{}{}", o.name, o.arg ? " " : "", o.arg ? o.arg : "");
    fmt::print("  {:<40} {}\n", flag, o.help);
  }
}

void load_workload(const std::string& path, Options& out) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(fmt::format("workload {}: {}", path, e.what()));
  }
  if (!root.IsMap()) throw std::runtime_error(fmt::format("workload {}: expected a map", path));
  for (const auto& item : root) {
    auto key = item.first.as<std::string>();
    const YAML::Node& value = item.second;
    if (key == "name") {
      out.workload_name = value.as<std::string>();
      continue;
    }
    if (key == "producer-config" || key == "consumer-config") {
      if (!value.IsMap()) throw std::runtime_error(fmt::format("workload {}: {} must be a map", path, key));
      auto& props = key == "producer-config" ? out.producer_props : out.consumer_props;
      for (const auto& p : value) props.emplace_back(p.first.as<std::string>(), p.second.as<std::string>());
      continue;
    }
    const Option* opt = find(key);
    if (opt == nullptr) throw std::runtime_error(fmt::format("workload {}: unknown key '{}'", path, key));
    if (!value.IsScalar()) throw std::runtime_error(fmt::format("workload {}: '{}' must be a scalar", path, key));
    opt->set(out, value.as<std::string>());
  }
}

}  // namespace

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::produce: return "produce";
    case Mode::consume: return "consume";
    case Mode::both: return "both";
  }
  return "?";
}

bool parse_options(int argc, char** argv, Options& out) {
  // Split "--name=value" and "--name value" first, so the workload can be applied before
  // any flag wherever it appears.
  std::vector<std::pair<std::string, std::string>> flags;
  std::string workload;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      print_help();
      return false;
    }
    if (!a.starts_with("--")) throw std::runtime_error(fmt::format("unexpected argument '{}'", a));
    a.remove_prefix(2);
    std::string name(a.substr(0, a.find('=')));
    std::optional<std::string> value;
    if (auto eq = a.find('='); eq != std::string_view::npos) value = std::string(a.substr(eq + 1));
    const Option* opt = name == "workload" ? nullptr : find(name);
    if (name != "workload" && opt == nullptr) throw std::runtime_error(fmt::format("unknown flag --{}", name));
    bool takes_value = name == "workload" || opt->arg != nullptr;
    if (!value && takes_value) {
      if (i + 1 >= argc) throw std::runtime_error(fmt::format("--{} needs a value", name));
      value = argv[++i];
    }
    if (name == "workload") workload = *value;
    else flags.emplace_back(name, value.value_or(""));
  }
  if (!workload.empty()) load_workload(workload, out);
  for (const auto& [name, value] : flags) find(name)->set(out, value);
  if (out.mode == Mode::produce && out.producers == 0) throw std::runtime_error("--mode produce needs --producers >= 1");
  if (out.mode == Mode::consume && out.consumers == 0) throw std::runtime_error("--mode consume needs --consumers >= 1");
  if (out.producing() && out.records > 0 && out.records < out.producers)
    throw std::runtime_error("--records must be at least --producers");
  if (out.transactional() && out.acks != "all") throw std::runtime_error("--transactional-id needs --acks all");
  if (out.warmup_s >= out.duration_s) throw std::runtime_error("--warmup must be shorter than --duration");
  return true;
}

}  // namespace loadgen
