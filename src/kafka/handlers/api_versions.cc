// ApiVersions: the APIs and version ranges this broker serves (served_apis.h), with KIP-511's
// answer to versions it does not know and its check of the client software name; from v3 the
// features this broker supports and the levels the cluster finalized (KIP-584), which clients
// read to choose a protocol (transaction.version 2: KIP-890 part 2).
#include "brokerd/metadata/features.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/protocol/messages/api_versions_request.h"
#include "brokerd/protocol/messages/api_versions_response.h"
#include "kafka/handler.h"
#include "kafka/served_apis.h"

namespace brokerd::kafka {
namespace {

using protocol::ApiVersionsRequest;
using protocol::ApiVersionsResponse;
using protocol::ErrorCode;

// KIP-511: [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?
bool valid_software_field(std::string_view s) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '.') return false;
  return true;
}

ApiVersionsResponse supported_versions() {
  ApiVersionsResponse resp;
  for (const auto& api : served_apis()) {
    ApiVersionsResponse::ApiVersion v;
    v.api_key = api.api_key;
    v.min_version = api.min_version;
    v.max_version = api.max_version;
    resp.api_keys.push_back(v);
  }
  return resp;
}

}  // namespace

net::Response api_versions_unsupported(const net::Request& req) {
  auto resp = supported_versions();
  resp.error_code = protocol::code(ErrorCode::unsupported_version);
  return net::Response{protocol::encode_response(req.api_key, 0, req.correlation_id, resp)};
}

boost::asio::awaitable<net::Response> handle_api_versions(HandlerContext& ctx) {
  auto req = ctx.decode<ApiVersionsRequest>();
  auto resp = supported_versions();
  if (ctx.version >= 3) {
    auto image = ctx.services.metadata.image();
    for (const auto& f : metadata::supported_features()) {
      auto& s = resp.supported_features.emplace_back();
      s.name = std::string(f.name);
      s.min_version = f.min_level;
      s.max_version = f.max_level;
    }
    // Kafka reports a finalized level as both bounds, and the metadata offset as the epoch.
    for (const auto& [name, level] : image->features) {
      if (level <= 0) continue;
      auto& f = resp.finalized_features.emplace_back();
      f.name = name;
      f.max_version_level = level;
      f.min_version_level = level;
    }
    resp.finalized_features_epoch = image->offset;
  }
  if (ctx.version >= 3 &&
      (!valid_software_field(req.client_software_name) || !valid_software_field(req.client_software_version))) {
    resp.error_code = protocol::code(ErrorCode::invalid_request);
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
