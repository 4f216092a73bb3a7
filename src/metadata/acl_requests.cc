#include "brokerd/metadata/acl_requests.h"

#include <map>
#include <tuple>

#include "brokerd/metadata/metadata_store.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

namespace {

acl::Filter filter_of(int8_t type, const std::optional<std::string>& name, int8_t pattern,
                      const std::optional<std::string>& principal, const std::optional<std::string>& host,
                      int8_t operation, int8_t permission) {
  return acl::Filter{static_cast<acl::ResourceType>(type), name, static_cast<acl::PatternType>(pattern), principal,
                     host, static_cast<acl::Operation>(operation), static_cast<acl::Permission>(permission)};
}

// A result's ErrorMessage: null on success, as the schemas say (the generated default is
// the empty string, which is not the same on the wire).
std::optional<std::string> message_of(ErrorCode error, const std::string& message) {
  if (error == ErrorCode::none) return std::nullopt;
  return message;
}

}  // namespace

protocol::CreateAclsResponse answer_create_acls(MetadataStore& store, const protocol::CreateAclsRequest& req) {
  std::vector<acl::Binding> bindings;
  for (const auto& c : req.creations)
    bindings.push_back(acl::binding_of({}, c.resource_type, c.resource_name, c.resource_pattern_type, c.principal, c.host,
                                       c.operation, c.permission_type));
  const auto answers = store.create_acls(std::move(bindings));
  protocol::CreateAclsResponse resp;
  for (const auto& a : answers) {
    auto& r = resp.results.emplace_back();
    r.error_code = protocol::code(a.error);
    r.error_message = message_of(a.error, a.message);
  }
  return resp;
}

protocol::DeleteAclsResponse answer_delete_acls(MetadataStore& store, const protocol::DeleteAclsRequest& req) {
  std::vector<acl::Filter> filters;
  for (const auto& f : req.filters)
    filters.push_back(filter_of(f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter,
                                f.principal_filter, f.host_filter, f.operation, f.permission_type));
  const auto deletions = store.delete_acls(filters);
  protocol::DeleteAclsResponse resp;
  for (const auto& d : deletions) {
    auto& r = resp.filter_results.emplace_back();
    r.error_code = protocol::code(d.answer.error);
    r.error_message = message_of(d.answer.error, d.answer.message);
    if (d.answer.error != ErrorCode::none) continue;
    for (const auto& b : d.removed) {
      auto& m = r.matching_acls.emplace_back();
      m.error_message = std::nullopt;
      m.resource_type = static_cast<int8_t>(b.resource_type);
      m.resource_name = b.resource_name;
      m.pattern_type = static_cast<int8_t>(b.pattern_type);
      m.principal = b.principal;
      m.host = b.host;
      m.operation = static_cast<int8_t>(b.operation);
      m.permission_type = static_cast<int8_t>(b.permission);
    }
  }
  return resp;
}

protocol::DescribeAclsResponse answer_describe_acls(const MetadataImage& image, const protocol::DescribeAclsRequest& req) {
  protocol::DescribeAclsResponse resp;
  resp.error_message = std::nullopt;
  const auto filter = filter_of(req.resource_type_filter, req.resource_name_filter, req.pattern_type_filter,
                                req.principal_filter, req.host_filter, req.operation, req.permission_type);
  if (auto why = acl::invalid_filter(filter)) {
    resp.error_code = protocol::code(ErrorCode::invalid_request);
    resp.error_message = *why;
    return resp;
  }
  // Grouped by resource, as Kafka answers.
  std::map<std::tuple<int8_t, std::string, int8_t>, std::vector<const acl::Binding*>> by_resource;
  for (const auto& [id, b] : image.acls->bindings)
    if (acl::matches(filter, b))
      by_resource[{static_cast<int8_t>(b.resource_type), b.resource_name, static_cast<int8_t>(b.pattern_type)}].push_back(&b);
  for (const auto& [key, bindings] : by_resource) {
    auto& r = resp.resources.emplace_back();
    r.resource_type = std::get<0>(key);
    r.resource_name = std::get<1>(key);
    r.pattern_type = std::get<2>(key);
    for (const auto* b : bindings) {
      auto& a = r.acls.emplace_back();
      a.principal = b->principal;
      a.host = b->host;
      a.operation = static_cast<int8_t>(b->operation);
      a.permission_type = static_cast<int8_t>(b->permission);
    }
  }
  return resp;
}

}  // namespace brokerd::metadata
