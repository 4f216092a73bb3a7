// The api_matrix cells of the security APIs: SASL on a PLAINTEXT listener, SCRAM
// credentials, ACLs and client quotas.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api_matrix.h"

namespace api_matrix {

// SASL on the matrix's PLAINTEXT listener: refused as Kafka refuses it, the connection kept
// (the exchanges themselves are tested with real clients, test_sasl.py).
void cell_sasl_handshake(int16_t v) {
  bp::SaslHandshakeRequest req;
  req.mechanism = "PLAIN";
  auto resp = check_cell<bp::SaslHandshakeResponse>(req, v);
  expect(resp.error_code == 34, "SaslHandshake on a PLAINTEXT listener should be ILLEGAL_SASL_STATE");
}

void cell_sasl_authenticate(int16_t v) {
  bp::SaslAuthenticateRequest req;
  const std::string token("\0u\0p", 4);
  for (char ch : token) req.auth_bytes.push_back(static_cast<std::byte>(ch));
  auto resp = check_cell<bp::SaslAuthenticateResponse>(req, v);
  expect(resp.error_code == 34, "SaslAuthenticate on a PLAINTEXT listener should be ILLEGAL_SASL_STATE");
}

void cell_alter_user_scram_credentials(int16_t v) {
  bp::AlterUserScramCredentialsRequest req;
  auto& u = req.upsertions.emplace_back();
  u.name = "matrix-user";
  u.mechanism = 1;
  u.iterations = 4096;
  u.salt = Bytes(16, std::byte{7});
  u.salted_password = Bytes(32, std::byte{9});
  auto& few = req.upsertions.emplace_back();
  few.name = "matrix-few-iterations";
  few.mechanism = 2;
  few.iterations = 100;
  few.salt = Bytes(16, std::byte{7});
  few.salted_password = Bytes(64, std::byte{9});
  auto& gone = req.deletions.emplace_back();
  gone.name = "matrix-no-such-user";
  gone.mechanism = 1;
  auto resp = check_cell<bp::AlterUserScramCredentialsResponse>(req, v);
  expect(resp.results.size() == 3, "AlterUserScramCredentials: 3 results expected");
  for (const auto& r : resp.results) {
    const int16_t want = r.user == "matrix-user" ? 0 : r.user == "matrix-few-iterations" ? 93 : 91;
    expect(r.error_code == want, "AlterUserScramCredentials: " + r.user + " got error " + std::to_string(r.error_code) +
                                     ", expected " + std::to_string(want));
  }
}

void cell_describe_user_scram_credentials(int16_t v) {
  bp::DescribeUserScramCredentialsRequest req;
  req.users = std::vector<bp::DescribeUserScramCredentialsRequest::UserName>(1);
  (*req.users)[0].name = "matrix-no-such-user";
  auto resp = check_cell<bp::DescribeUserScramCredentialsResponse>(req, v);
  expect(resp.results.size() == 1 && resp.results[0].error_code == 91,
         "DescribeUserScramCredentials: an unknown user should be RESOURCE_NOT_FOUND");
  bp::DescribeUserScramCredentialsRequest all;
  all.users = std::nullopt;
  expect(check_cell<bp::DescribeUserScramCredentialsResponse>(all, v).error_code == 0,
         "DescribeUserScramCredentials: listing failed");
}

// ACLs: made, listed and removed (the matrix's broker authorizes nothing, so they change
// nothing it does).
namespace {

bp::CreateAclsRequest::AclCreation matrix_acl(const std::string& topic) {
  bp::CreateAclsRequest::AclCreation c;
  c.resource_type = 2;  // TOPIC
  c.resource_name = topic;
  c.resource_pattern_type = 3;  // LITERAL
  c.principal = "User:matrix";
  c.host = "*";
  c.operation = 3;  // READ
  c.permission_type = 3;  // ALLOW
  return c;
}

}  // namespace

void cell_create_acls(int16_t v) {
  bp::CreateAclsRequest req;
  req.creations.push_back(matrix_acl("matrix-acl-" + std::to_string(v)));
  auto bad = matrix_acl("matrix-acl-bad");
  bad.principal = "no-colon";
  req.creations.push_back(bad);
  auto resp = check_cell<bp::CreateAclsResponse>(req, v);
  expect(resp.results.size() == 2, "CreateAcls: 2 results expected");
  expect(resp.results[0].error_code == 0, "CreateAcls: a valid binding refused");
  expect(resp.results[1].error_code == 42, "CreateAcls: a principal without a type should be INVALID_REQUEST");
}

void cell_describe_acls(int16_t v) {
  bp::CreateAclsRequest create;
  create.creations.push_back(matrix_acl("matrix-acl-described"));
  expect(exchange_new<bp::CreateAclsResponse>(create, 1).results.at(0).error_code == 0,
         "DescribeAcls: the binding to describe was not created");
  bp::DescribeAclsRequest req;
  req.resource_type_filter = 2;
  req.resource_name_filter = "matrix-acl-described";
  req.pattern_type_filter = 1;  // ANY
  req.principal_filter = std::nullopt;
  req.host_filter = std::nullopt;
  req.operation = 1;
  req.permission_type = 1;
  auto resp = check_cell<bp::DescribeAclsResponse>(req, v);
  expect(resp.error_code == 0 && resp.resources.size() == 1 && resp.resources[0].acls.size() == 1,
         "DescribeAcls: the binding was not found");
}

void cell_delete_acls(int16_t v) {
  const std::string topic = "matrix-acl-deleted-" + std::to_string(v);
  bp::CreateAclsRequest create;
  create.creations.push_back(matrix_acl(topic));
  expect(exchange_new<bp::CreateAclsResponse>(create, 1).results.at(0).error_code == 0,
         "DeleteAcls: the binding to delete was not created");
  bp::DeleteAclsRequest req;
  auto& f = req.filters.emplace_back();
  f.resource_type_filter = 2;
  f.resource_name_filter = topic;
  f.pattern_type_filter = 3;
  f.principal_filter = "User:matrix";
  f.host_filter = std::nullopt;
  f.operation = 1;
  f.permission_type = 1;
  auto resp = check_cell<bp::DeleteAclsResponse>(req, v);
  expect(resp.filter_results.size() == 1 && resp.filter_results[0].error_code == 0 &&
             resp.filter_results[0].matching_acls.size() == 1,
         "DeleteAcls: the binding was not deleted");
}

namespace {

// One AlterClientQuotas entry: a quota of one user.
bp::AlterClientQuotasRequest::EntryData user_quota(const std::string& user, const std::string& key, double value) {
  bp::AlterClientQuotasRequest::EntryData entry;
  auto& e = entry.entity.emplace_back();
  e.entity_type = "user";
  e.entity_name = user;
  auto& op = entry.ops.emplace_back();
  op.key = key;
  op.value = value;
  return entry;
}

}  // namespace

void cell_alter_client_quotas(int16_t v) {
  bp::AlterClientQuotasRequest req;
  auto ok = user_quota(vname("matrix-user", v), "producer_byte_rate", 1048576);
  auto bad_key = ok, ip = ok;
  bad_key.entity[0].entity_name = vname("matrix-other", v);
  bad_key.ops[0].key = "no_such_quota";
  ip.entity[0].entity_type = "ip";
  ip.entity[0].entity_name = "127.0.0.1";
  ip.ops[0].key = "connection_creation_rate";
  req.entries = {ok, bad_key, ip};
  auto resp = check_cell<bp::AlterClientQuotasResponse>(req, v);
  expect(resp.entries.size() == 3 && resp.entries[0].error_code == 0 && resp.entries[1].error_code == 42 &&
             resp.entries[2].error_code == 42,
         "AlterClientQuotas: expected NONE, INVALID_REQUEST, INVALID_REQUEST");
}

void cell_describe_client_quotas(int16_t v) {
  // A quota of this cell's own to find.
  bp::AlterClientQuotasRequest set;
  set.entries.push_back(user_quota(vname("matrix-dcq", v), "consumer_byte_rate", 2048));
  auto sresp = exchange_new<bp::AlterClientQuotasResponse>(set, 0);
  expect(sresp.entries.size() == 1 && sresp.entries[0].error_code == 0, "DescribeClientQuotas setup failed");
  bp::DescribeClientQuotasRequest req;
  auto& c = req.components.emplace_back();
  c.entity_type = "user";
  c.match_type = 0;
  c.match = vname("matrix-dcq", v);
  req.strict = true;
  bool found = false;
  for (int attempt = 0; attempt < 50 && !found; ++attempt) {  // the image catches up with the commit
    auto resp = check_cell<bp::DescribeClientQuotasResponse>(req, v);
    expect(resp.error_code == 0, "DescribeClientQuotas: error " + std::to_string(resp.error_code));
    found = resp.entries && resp.entries->size() == 1 && resp.entries->at(0).values.size() == 1 &&
            resp.entries->at(0).values[0].value == 2048;
  }
  expect(found, "DescribeClientQuotas: the quota set is not listed");
  bp::DescribeClientQuotasRequest dup = req;  // a type twice: INVALID_REQUEST
  dup.components.push_back(dup.components[0]);
  auto r2 = check_cell<bp::DescribeClientQuotasResponse>(dup, v);
  expect(r2.error_code == 42, "DescribeClientQuotas: a duplicate component is not refused");
}

}  // namespace api_matrix
