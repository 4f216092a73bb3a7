// brokerctl: administer a brokerd (or any Kafka) cluster over the Kafka protocol.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "brokerctl/commands.h"

namespace brokerctl {
namespace {

std::vector<Command> all_commands() {
  std::vector<Command> all;
  for (auto part : {topic_commands, partition_commands, group_commands, config_commands, cluster_commands,
                    produce_consume_commands, link_commands, user_commands, acl_commands, log_dir_commands, quota_commands,
                    tenant_commands, transaction_commands, feature_commands}) {
    for (auto& c : part()) all.push_back(std::move(c));
  }
  return all;
}

std::string command_path(const Command& c) { return c.group.empty() ? c.name : c.group + " " + c.name; }

std::string option_lines(const std::vector<OptionSpec>& options) {
  std::string out;
  for (const auto& o : options) {
    std::string left = "  --" + o.name + (o.value_name.empty() ? "" : " " + o.value_name);
    if (left.size() < 34) left.append(34 - left.size(), ' ');
    else left += "  ";
    out += left + o.help + (o.repeatable ? " (repeatable)" : "") + "\n";
  }
  return out;
}

std::string command_help(const Command& c) {
  std::string usage = "usage: brokerctl " + command_path(c);
  for (size_t i = 0; i < c.positionals.size(); ++i) {
    bool optional = i >= c.positionals.size() - c.optional_positionals;
    usage += optional ? " [" + c.positionals[i] + "]" : " " + c.positionals[i];
  }
  if (!c.options.empty()) usage += " [options]";
  std::string out = usage + "\n\n" + c.summary + "\n";
  if (!c.notes.empty()) out += "\n" + c.notes + "\n";
  if (!c.options.empty()) out += "\noptions:\n" + option_lines(c.options);
  out += "\nglobal options:\n" + option_lines(global_options());
  return out;
}

std::string overview(const std::vector<Command>& cmds, const std::string& group) {
  std::string out = group.empty() ? "usage: brokerctl COMMAND [options]\n\nAdminister a brokerd cluster over the Kafka protocol.\n\ncommands:\n"
                                  : "usage: brokerctl " + group + " COMMAND [options]\n\ncommands:\n";
  for (const auto& c : cmds) {
    if (!group.empty() && c.group != group) continue;
    std::string left = "  " + command_path(c);
    if (left.size() < 30) left.append(30 - left.size(), ' ');
    out += left + c.summary + "\n";
  }
  out += "\nRun 'brokerctl COMMAND --help' for a command's options.\n\nglobal options:\n" + option_lines(global_options());
  return out;
}

// The words that name the command ("topics create", or "produce" and its first argument),
// skipping global options and their values; the first other option ends them.
std::vector<std::string> command_words(const std::vector<std::string>& argv, std::vector<std::string>& rest) {
  std::vector<std::string> words;
  bool done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (!done && words.size() < 2 && !a.empty() && a[0] != '-') {
      words.push_back(a);
      continue;
    }
    rest.push_back(a);
    if (a.empty() || a[0] != '-') continue;
    bool global_with_value = false;
    for (const auto& g : global_options()) {
      if (a == "--" + g.name && !g.value_name.empty()) global_with_value = true;
    }
    if (global_with_value && i + 1 < argv.size()) {
      rest.push_back(argv[++i]);
    } else if (a != "--help" && a != "-h" && a.rfind("--output=", 0) != 0 &&
               a.rfind("--bootstrap-server=", 0) != 0 && a.rfind("--timeout-ms=", 0) != 0 &&
               a.rfind("--command-config=", 0) != 0) {
      done = true;
    }
  }
  return words;
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto cmds = all_commands();
  std::vector<std::string> rest;
  auto words = command_words(args, rest);
  bool help = false;
  for (const auto& a : rest) help = help || a == "--help" || a == "-h";

  if (words.empty()) {
    if (help) {
      print_text(overview(cmds, ""));
      return 0;
    }
    throw UsageError("missing command (see 'brokerctl --help')");
  }
  const Command* cmd = nullptr;
  bool group_known = false;
  for (const auto& c : cmds) {
    if (c.group.empty() && c.name == words[0]) cmd = &c;
    if (!c.group.empty() && c.group == words[0]) {
      group_known = true;
      if (words.size() > 1 && c.name == words[1]) cmd = &c;
    }
  }
  if (!cmd) {
    if (!group_known) throw UsageError("unknown command '" + words[0] + "' (see 'brokerctl --help')");
    if (words.size() < 2) {
      if (help) {
        print_text(overview(cmds, words[0]));
        return 0;
      }
      throw UsageError("missing " + words[0] + " command (see 'brokerctl " + words[0] + " --help')");
    }
    throw UsageError("unknown command '" + words[0] + " " + words[1] + "' (see 'brokerctl " + words[0] + " --help')");
  }
  // A top-level command's second word is its first positional.
  if (cmd->group.empty() && words.size() > 1) rest.insert(rest.begin(), words[1]);
  if (help) {
    print_text(command_help(*cmd));
    return 0;
  }

  Context ctx;
  try {
    ctx.args = parse_args(cmd->options, cmd->positionals, cmd->optional_positionals, rest);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (see 'brokerctl " + command_path(*cmd) + " --help')");
  }
  std::string output = ctx.args.get("output").value_or("table");
  if (output == "json") ctx.format = OutputFormat::json;
  else if (output != "table") throw UsageError("--output must be table or json, got '" + output + "'");
  const char* env = std::getenv("BROKERCTL_BOOTSTRAP");
  std::string bootstrap = ctx.args.get("bootstrap-server").value_or(env && *env ? env : "localhost:9092");
  ctx.bootstrap = parse_endpoints(bootstrap);
  ctx.timeout_ms = static_cast<int>(ctx.args.get_int("timeout-ms", 1, 3'600'000).value_or(30000));
  if (auto file = ctx.args.get("command-config")) ctx.security = load_command_config(*file);
  try {
    cmd->run(ctx);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (see 'brokerctl " + command_path(*cmd) + " --help')");
  }
  return 0;
}

}  // namespace
}  // namespace brokerctl

int main(int argc, char** argv) {
  try {
    int rc = brokerctl::run(argc, argv);
    std::fflush(stdout);
    return rc;
  } catch (const brokerctl::UsageError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "brokerctl: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "brokerctl: error: %s\n", e.what());
    return 1;
  }
}
