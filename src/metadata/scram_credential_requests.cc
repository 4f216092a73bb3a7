#include "brokerd/common/byte_text.h"
#include "brokerd/metadata/scram_credential_requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "brokerd/metadata/metadata_store.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

namespace {

struct Refusal {
  ErrorCode error = ErrorCode::none;
  std::string message;
};

// Kafka's checks of one upsertion, in its order.
Refusal check_upsertion(const protocol::AlterUserScramCredentialsRequest::ScramCredentialUpsertion& u) {
  if (u.name.empty()) return {ErrorCode::unacceptable_credential, "Username must not be empty"};
  if (!auth::scram_mechanism(u.mechanism))
    return {ErrorCode::unsupported_sasl_mechanism, fmt::format("Unknown SCRAM mechanism {}", u.mechanism)};
  if (u.iterations < auth::kMinScramIterations)
    return {ErrorCode::unacceptable_credential,
            fmt::format("Too few iterations: {} (at least {})", u.iterations, auth::kMinScramIterations)};
  if (u.iterations > auth::kMaxScramIterations)
    return {ErrorCode::unacceptable_credential,
            fmt::format("Too many iterations: {} (at most {})", u.iterations, auth::kMaxScramIterations)};
  if (u.salt.empty()) return {ErrorCode::unacceptable_credential, "Salt must not be empty"};
  if (u.salted_password.empty()) return {ErrorCode::unacceptable_credential, "Salted password must not be empty"};
  return {};
}

}  // namespace

protocol::AlterUserScramCredentialsResponse answer_alter_user_scram_credentials(
    MetadataStore& store, const protocol::AlterUserScramCredentialsRequest& req) {
  // One result per user. A user named twice (for the same mechanism) is refused whole, and so
  // is every change of a user one of whose changes is invalid: a user's changes apply together.
  std::vector<std::string> users;
  std::map<std::string, Refusal> refused;
  std::set<std::pair<std::string, int8_t>> seen, duplicated;
  auto note = [&](const std::string& user, int8_t mechanism) {
    if (std::find(users.begin(), users.end(), user) == users.end()) users.push_back(user);
    if (!seen.insert({user, mechanism}).second) duplicated.insert({user, mechanism});
  };
  for (const auto& d : req.deletions) note(d.name, d.mechanism);
  for (const auto& u : req.upsertions) note(u.name, u.mechanism);
  for (const auto& [user, mechanism] : duplicated)
    refused.emplace(user, Refusal{ErrorCode::duplicate_resource,
                                  "A user credential cannot be altered twice in the same request"});

  std::vector<MetadataStore::ScramChange> changes;
  for (const auto& d : req.deletions) {
    if (refused.count(d.name)) continue;
    auto mechanism = auth::scram_mechanism(d.mechanism);
    if (d.name.empty()) {
      refused.emplace(d.name, Refusal{ErrorCode::unacceptable_credential, "Username must not be empty"});
    } else if (!mechanism) {
      refused.emplace(d.name, Refusal{ErrorCode::unsupported_sasl_mechanism,
                                      fmt::format("Unknown SCRAM mechanism {}", d.mechanism)});
    } else {
      changes.push_back({d.name, *mechanism, std::nullopt});
    }
  }
  for (const auto& u : req.upsertions) {
    if (refused.count(u.name)) continue;
    if (auto r = check_upsertion(u); r.error != ErrorCode::none) {
      refused.emplace(u.name, r);
      continue;
    }
    const auto mechanism = *auth::scram_mechanism(u.mechanism);
    changes.push_back({u.name, mechanism,
                       auth::credential_from_salted(mechanism, text_of(u.salt), text_of(u.salted_password), u.iterations)});
  }
  std::erase_if(changes, [&](const MetadataStore::ScramChange& c) { return refused.count(c.user) > 0; });

  const auto answers = store.alter_scram_credentials(changes);
  for (size_t i = 0; i < changes.size(); ++i)
    if (answers[i].error != ErrorCode::none && !refused.count(changes[i].user))
      refused.emplace(changes[i].user, Refusal{answers[i].error, answers[i].message});

  protocol::AlterUserScramCredentialsResponse resp;
  for (const auto& user : users) {
    auto& r = resp.results.emplace_back();
    r.user = user;
    r.error_message = std::nullopt;  // null on success, as the schema says
    if (auto it = refused.find(user); it != refused.end()) {
      r.error_code = protocol::code(it->second.error);
      r.error_message = it->second.message;
    }
  }
  return resp;
}

protocol::DescribeUserScramCredentialsResponse answer_describe_user_scram_credentials(
    const MetadataImage& image, const protocol::DescribeUserScramCredentialsRequest& req) {
  protocol::DescribeUserScramCredentialsResponse resp;
  resp.error_message = std::nullopt;  // null on success, as the schema says
  auto describe = [&](const std::string& user, const std::map<auth::ScramMechanism, auth::ScramCredential>& by_mechanism) {
    auto& r = resp.results.emplace_back();
    r.user = user;
    r.error_message = std::nullopt;
    for (const auto& [mechanism, c] : by_mechanism) {
      auto& info = r.credential_infos.emplace_back();
      info.mechanism = static_cast<int8_t>(mechanism);
      info.iterations = c.iterations;
    }
  };
  const auto& all = *image.scram_credentials;
  if (!req.users || req.users->empty()) {
    for (const auto& [user, by_mechanism] : all) describe(user, by_mechanism);
    return resp;
  }
  std::map<std::string, int> asked;
  for (const auto& u : *req.users) ++asked[u.name];
  std::set<std::string> answered;
  for (const auto& u : *req.users) {
    if (!answered.insert(u.name).second) continue;
    if (asked[u.name] > 1) {
      auto& r = resp.results.emplace_back();
      r.user = u.name;
      r.error_code = protocol::code(ErrorCode::duplicate_resource);
      r.error_message = "Cannot describe the same user twice in the same request";
      continue;
    }
    auto it = all.find(u.name);
    if (it == all.end()) {
      auto& r = resp.results.emplace_back();
      r.user = u.name;
      r.error_code = protocol::code(ErrorCode::resource_not_found);
      r.error_message = fmt::format("Attempt to describe a user credential that does not exist: {}", u.name);
      continue;
    }
    describe(u.name, it->second);
  }
  return resp;
}

}  // namespace brokerd::metadata
