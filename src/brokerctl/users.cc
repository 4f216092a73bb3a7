// users create, list, delete: SCRAM credentials (KIP-554). The password is salted and hashed
// here (PBKDF2 with the mechanism's HMAC); the cluster stores only the derived keys.
#include <iostream>

#include <fmt/format.h>

#include "brokerd/common/byte_text.h"
#include "brokerd/auth/scram.h"
#include "brokerd/protocol/messages/alter_user_scram_credentials_request.h"
#include "brokerd/protocol/messages/alter_user_scram_credentials_response.h"
#include "brokerd/protocol/messages/describe_user_scram_credentials_request.h"
#include "brokerd/protocol/messages/describe_user_scram_credentials_response.h"

#include "brokerctl/commands.h"

namespace brokerctl {

using brokerd::bytes_of;
namespace {

namespace auth = brokerd::auth;

auth::ScramMechanism mechanism_of(const Context& ctx) {
  const std::string name = ctx.args.get("mechanism").value_or("SCRAM-SHA-256");
  auto m = auth::scram_mechanism(name);
  if (!m) throw UsageError("--mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512, not '" + name + "'");
  return *m;
}

std::string password_of(const Context& ctx) {
  const auto given = ctx.args.get("password");
  const bool from_stdin = ctx.args.flag("password-stdin");
  if (given && from_stdin) throw UsageError("give --password or --password-stdin, not both");
  if (given) return *given;
  if (!from_stdin) throw UsageError("--password P or --password-stdin is required");
  std::string line;
  std::getline(std::cin, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

void alter(Context& ctx, const proto::AlterUserScramCredentialsRequest& req, const std::string& user, const char* done) {
  auto resp = ctx.client().any().call<proto::AlterUserScramCredentialsResponse>(req);
  for (const auto& r : resp.results) check_error(r.error_code, "user " + r.user, r.error_message);
  if (ctx.json()) {
    Json j = Json::object();
    j.set("user", user).set("result", done);
    print_json(j);
  } else {
    print_text(fmt::format("User {} {}.", user, done));
  }
}

void create(Context& ctx) {
  const std::string user = ctx.args.positionals().at(0);
  const auto mechanism = mechanism_of(ctx);
  const int32_t iterations = static_cast<int32_t>(
      ctx.args.get_int("iterations", auth::kMinScramIterations, auth::kMaxScramIterations).value_or(auth::kDefaultScramIterations));
  const std::string password = password_of(ctx);
  if (password.empty()) throw UsageError("the password must not be empty");
  const std::string salt = auth::random_salt();
  proto::AlterUserScramCredentialsRequest req;
  auto& u = req.upsertions.emplace_back();
  u.name = user;
  u.mechanism = static_cast<int8_t>(mechanism);
  u.iterations = iterations;
  u.salt = bytes_of(salt);
  u.salted_password = bytes_of(auth::salted_password(mechanism, password, salt, iterations));
  alter(ctx, req, user, fmt::format("created ({}, {} iterations)", auth::mechanism_name(mechanism), iterations).c_str());
}

void remove(Context& ctx) {
  const std::string user = ctx.args.positionals().at(0);
  proto::AlterUserScramCredentialsRequest req;
  auto& d = req.deletions.emplace_back();
  d.name = user;
  d.mechanism = static_cast<int8_t>(mechanism_of(ctx));
  alter(ctx, req, user, fmt::format("deleted ({})", auth::mechanism_name(mechanism_of(ctx))).c_str());
}

void list(Context& ctx) {
  proto::DescribeUserScramCredentialsRequest req;
  req.users = std::nullopt;
  auto resp = ctx.client().any().call<proto::DescribeUserScramCredentialsResponse>(req);
  check_error(resp.error_code, "DescribeUserScramCredentials", resp.error_message);
  Json arr = Json::array();
  Table table({"USER", "MECHANISM", "ITERATIONS"});
  for (const auto& r : resp.results) {
    for (const auto& c : r.credential_infos) {
      const auto m = auth::scram_mechanism(c.mechanism);
      const std::string name = m ? std::string(auth::mechanism_name(*m)) : "UNKNOWN(" + std::to_string(c.mechanism) + ")";
      Json j = Json::object();
      j.set("user", r.user).set("mechanism", name).set("iterations", static_cast<int64_t>(c.iterations));
      arr.push(j);
      table.add({r.user, name, std::to_string(c.iterations)});
    }
  }
  if (ctx.json()) print_json(arr);
  else print_text(table.empty() ? "No SCRAM users.\n" : table.render());
}

}  // namespace

std::vector<Command> user_commands() {
  const OptionSpec mechanism{"mechanism", "SCRAM-SHA-256|SCRAM-SHA-512", "the SCRAM mechanism (default SCRAM-SHA-256)"};
  return {{"users", "create",
           "Create or change a user's SCRAM credential (SASL/SCRAM on SASL listeners).",
           {"NAME"},
           0,
           {mechanism,
            {"password", "P", "the password"},
            {"password-stdin", "", "read the password from the first line of standard input"},
            {"iterations", "N", "PBKDF2 iterations, 4096-16384 (default 8192)"}},
           "The password is salted and hashed here; the cluster keeps only the derived keys, in its metadata log.",
           create},
          {"users", "list", "List the users with SCRAM credentials (mechanisms and iterations, never keys).", {}, 0, {},
           "", list},
          {"users", "delete", "Delete a user's SCRAM credential for one mechanism.", {"NAME"}, 0, {mechanism}, "",
           remove}};
}

}  // namespace brokerctl
