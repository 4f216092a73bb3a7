// The api_matrix cells of brokerd's own APIs (proto/brokerd): mirror links and tenant limits.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api_matrix.h"

namespace api_matrix {

// brokerd's own APIs (proto/brokerd): mirror links, against a source that is not there.
void cell_create_mirror_links(int16_t v) {
  bp::CreateMirrorLinksRequest req;
  auto& l = req.links.emplace_back();
  l.name = "matrix-link";
  l.source_bootstrap_servers = "127.0.0.1:1";
  l.topics = {"matrix-mirrored"};
  req.validate_only = true;
  auto& bad = req.links.emplace_back();
  bad.name = "matrix-link-without-topics";
  bad.source_bootstrap_servers = "127.0.0.1:1";
  auto resp = check_cell<bp::CreateMirrorLinksResponse>(req, v);
  expect(resp.results.size() == 2, "CreateMirrorLinks: 2 results expected");
  expect(resp.results[0].error_code == 0, "CreateMirrorLinks: a valid link refused");
  expect(resp.results[1].error_code == 42, "CreateMirrorLinks: a link without topics should be INVALID_REQUEST");
}

void cell_alter_mirror_links(int16_t v) {
  bp::CreateMirrorLinksRequest create;
  auto& l = create.links.emplace_back();
  l.name = "matrix-alter-" + std::to_string(v);
  l.source_bootstrap_servers = "127.0.0.1:1";
  l.topics = {"matrix-mirrored"};
  expect(exchange_new<bp::CreateMirrorLinksResponse>(create, 0).results.at(0).error_code == 0,
         "AlterMirrorLinks: the link to alter was not created");
  bp::AlterMirrorLinksRequest req;
  auto alter = [&req](const std::string& name, int8_t op) {
    auto& a = req.links.emplace_back();
    a.name = name;
    a.operation = op;
  };
  for (int8_t op : {0, 1, 2}) alter(l.name, op);
  alter("matrix-no-such-link", 0);
  auto resp = check_cell<bp::AlterMirrorLinksResponse>(req, v);
  expect(resp.results.size() == 4, "AlterMirrorLinks: 4 results expected");
  for (size_t i = 0; i < 3; ++i)
    expect(resp.results[i].error_code == 0, "AlterMirrorLinks: operation " + std::to_string(i) + " refused");
  expect(resp.results[3].error_code == 91, "AlterMirrorLinks: an unknown link should be RESOURCE_NOT_FOUND");
}

void cell_describe_mirror_links(int16_t v) {
  bp::DescribeMirrorLinksRequest req;
  req.names = std::vector<std::string>{"matrix-no-such-link"};
  auto resp = check_cell<bp::DescribeMirrorLinksResponse>(req, v);
  expect(resp.links.size() == 1 && resp.links[0].error_code == 91,
         "DescribeMirrorLinks: an unknown link should be RESOURCE_NOT_FOUND");
  bp::DescribeMirrorLinksRequest all;
  all.names = std::nullopt;
  expect(check_cell<bp::DescribeMirrorLinksResponse>(all, v).error_code == 0, "DescribeMirrorLinks: listing failed");
}

void cell_promote_mirror_topics(int16_t v) {
  bp::PromoteMirrorTopicsRequest req;
  req.link_name = "matrix-no-such-link";
  req.topics = std::nullopt;
  auto resp = check_cell<bp::PromoteMirrorTopicsResponse>(req, v);
  expect(resp.error_code == 91, "PromoteMirrorTopics: an unknown link should be RESOURCE_NOT_FOUND");
}

void cell_alter_tenant_limits(int16_t v) {
  bp::AlterTenantLimitsRequest req;
  auto& ok = req.entries.emplace_back();
  ok.principal = "User:" + vname("matrix-tenant", v);
  auto& op = ok.ops.emplace_back();
  op.key = "max.topics";
  op.value = 1000;
  auto bad = ok;
  bad.principal = "User:" + vname("matrix-other-tenant", v);
  bad.ops[0].key = "max.bytes";
  req.entries.push_back(bad);
  auto resp = check_cell<bp::AlterTenantLimitsResponse>(req, v);
  expect(resp.entries.size() == 2 && resp.entries[0].error_code == 0 && resp.entries[1].error_code == 42,
         "AlterTenantLimits: expected NONE, INVALID_REQUEST");
}

void cell_describe_tenant_limits(int16_t v) {
  bp::AlterTenantLimitsRequest set;
  auto& e = set.entries.emplace_back();
  e.principal = "User:" + vname("matrix-described-tenant", v);
  e.pattern_type = 4;
  auto& op = e.ops.emplace_back();
  op.key = "max.partitions";
  op.value = 50;
  auto sresp = exchange_new<bp::AlterTenantLimitsResponse>(set, 0);
  expect(sresp.entries.size() == 1 && sresp.entries[0].error_code == 0, "DescribeTenantLimits setup failed");
  bp::DescribeTenantLimitsRequest req;
  req.principal = e.principal + "-web";
  auto resp = check_cell<bp::DescribeTenantLimitsResponse>(req, v);
  expect(resp.error_code == 0 && resp.limits.size() == 1 && resp.limits[0].principal == e.principal &&
             resp.limits[0].pattern_type == 4 && resp.limits[0].values.size() == 1 &&
             resp.limits[0].values[0].value == 50,
         "DescribeTenantLimits: the prefixed limit that applies is not listed");
}

}  // namespace api_matrix
