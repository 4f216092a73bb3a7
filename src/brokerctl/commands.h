#pragma once
// The command table: each command group (topics.cc, groups.cc, ...) returns its commands.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "brokerctl/args.h"
#include "brokerctl/client.h"
#include "brokerctl/output.h"

namespace brokerctl {

// What a command runs with: its parsed arguments, the output format and a client that
// connects on first use (so input checks come before any connection).
struct Context {
  Args args;
  OutputFormat format = OutputFormat::table;
  std::vector<Endpoint> bootstrap;
  int timeout_ms = 30000;
  ClientSecurity security;
  std::unique_ptr<Client> client_;

  Client& client() {
    if (!client_) client_ = std::make_unique<Client>(bootstrap, timeout_ms, security);
    return *client_;
  }
  bool json() const { return format == OutputFormat::json; }
};

struct Command {
  std::string group;  // "topics"; empty for a top-level command such as "produce"
  std::string name;
  std::string summary;
  std::vector<std::string> positionals;  // shown upper-case in the usage line
  size_t optional_positionals = 0;       // how many trailing positionals may be left out
  std::vector<OptionSpec> options;
  std::string notes;  // extra help text
  std::function<void(Context&)> run;
};

std::vector<Command> topic_commands();
std::vector<Command> group_commands();
std::vector<Command> config_commands();
std::vector<Command> cluster_commands();
std::vector<Command> partition_commands();
std::vector<Command> produce_consume_commands();
std::vector<Command> link_commands();
std::vector<Command> user_commands();
std::vector<Command> acl_commands();
std::vector<Command> log_dir_commands();
std::vector<Command> quota_commands();
std::vector<Command> tenant_commands();
std::vector<Command> transaction_commands();
std::vector<Command> feature_commands();

// Shared by topics alter-config and configs alter: IncrementalAlterConfigs on one topic.
void alter_topic_configs(Context& ctx, const std::string& topic, const std::vector<std::string>& set,
                         const std::vector<std::string>& del);
// Shared by topics describe and configs describe. resource_type: 2 topic, 4 broker.
proto::DescribeConfigsResponse::DescribeConfigsResult describe_configs(Context& ctx, int8_t resource_type,
                                                                       const std::string& name);
std::string config_source_name(int8_t source);

}  // namespace brokerctl
