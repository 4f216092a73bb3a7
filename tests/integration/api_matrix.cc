// api_matrix: for every API the broker advertises and every version in its advertised range,
// sends a valid request to a live brokerd and checks that
//   - a response arrives (the connection is not closed) with the request's correlation id,
//   - its header has the right version (flexible or not; ApiVersions always v0),
//   - its body decodes with the generated response codec of that version, to the last byte,
//   - a second request on the same connection is still answered.
// Requests start from the default-constructed generated struct and fill what makes them
// meaningful: an existing topic (by id for the versions that name topics by id), partitions
// that exist and one that does not, joined groups with real member ids, a producer id.
//
// Usage: api_matrix HOST PORT. Prints one line per failure and a summary; exit code 1 when
// anything failed. The connection and its bounded waits are in wire_client.h.
// The fixture and its helpers are in api_matrix_fixture.cc, the cells by group of APIs in
// api_matrix_{produce_fetch,groups,admin,security,brokerd,transactions}.cc, all declared in api_matrix.h.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api_matrix.h"

using namespace api_matrix;

namespace {

using Cell = std::function<void(int16_t)>;

const std::map<int16_t, Cell>& cells() {
  static const std::map<int16_t, Cell> m = {
      {0, cell_produce},          {1, cell_fetch},
      {2, cell_list_offsets},     {3, cell_metadata},
      {8, cell_offset_commit},    {9, cell_offset_fetch},
      {10, cell_find_coordinator}, {11, cell_join_group},
      {12, cell_heartbeat},       {13, cell_leave_group},
      {14, cell_sync_group},      {15, cell_describe_groups},
      {16, cell_list_groups},     {18, cell_api_versions},
      {19, cell_create_topics},   {20, cell_delete_topics},
      {21, cell_delete_records},  {22, cell_init_producer_id},
      {23, cell_offset_for_leader_epoch},
      {32, cell_describe_configs}, {33, cell_alter_configs},
      {35, cell_describe_log_dirs},
      {34, cell_alter_replica_log_dirs},
      {48, cell_describe_client_quotas},
      {49, cell_alter_client_quotas},
      {37, cell_create_partitions}, {42, cell_delete_groups},
      {43, cell_elect_leaders}, {45, cell_alter_partition_reassignments}, {46, cell_list_partition_reassignments},
      {44, cell_incremental_alter_configs}, {47, cell_offset_delete},
      {55, cell_describe_quorum}, {57, cell_update_features},
      {60, cell_describe_cluster}, {61, cell_describe_producers},
      {24, cell_add_partitions_to_txn}, {25, cell_add_offsets_to_txn},
      {26, cell_end_txn}, {27, cell_write_txn_markers}, {28, cell_txn_offset_commit},
      {65, cell_describe_transactions}, {66, cell_list_transactions},
      {74, cell_list_config_resources}, {75, cell_describe_topic_partitions},
      {17, cell_sasl_handshake}, {36, cell_sasl_authenticate},
      {29, cell_describe_acls}, {30, cell_create_acls}, {31, cell_delete_acls},
      {50, cell_describe_user_scram_credentials}, {51, cell_alter_user_scram_credentials},
      {30000, cell_create_mirror_links}, {30001, cell_alter_mirror_links},
      {30002, cell_describe_mirror_links}, {30003, cell_promote_mirror_topics},
      {30004, cell_alter_tenant_limits}, {30005, cell_describe_tenant_limits},
  };
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s HOST PORT\n", argv[0]);
    return 2;
  }
  g_host = argv[1];
  g_port = std::atoi(argv[2]);
  std::vector<std::string> failures;
  int cells_run = 0, apis = 0;
  try {
    setup();
  } catch (const std::exception& e) {
    std::printf("FAIL setup: %s\n", e.what());
    return 1;
  }
  // The served table, as ApiVersions advertises it (it answers from served_apis.cc).
  bp::ApiVersionsRequest avreq;
  avreq.client_software_name = "api-matrix";
  avreq.client_software_version = "1.0";
  auto advertised = exchange_new<bp::ApiVersionsResponse>(avreq, 3).api_keys;
  for (const auto& api : advertised) {
    ++apis;
    auto it = cells().find(api.api_key);
    if (it == cells().end()) {
      failures.push_back(std::string("api ") + std::to_string(api.api_key) + " (" + api_name(api.api_key) +
                         "): advertised but the matrix has no request for it");
      continue;
    }
    for (int16_t v = api.min_version; v <= api.max_version; ++v) {
      ++cells_run;
      try {
        it->second(v);
        std::printf("ok   %s v%d\n", api_name(api.api_key), v);
      } catch (const std::exception& e) {
        std::string line = std::string(api_name(api.api_key)) + " v" + std::to_string(v) + ": " + e.what();
        std::printf("FAIL %s\n", line.c_str());
        failures.push_back(line);
      }
      std::fflush(stdout);
    }
  }
  std::printf("matrix: %d APIs, %d (API, version) cells, %zu failures\n", apis, cells_run, failures.size());
  for (const auto& f : failures) std::printf("  %s\n", f.c_str());
  return failures.empty() ? 0 : 1;
}
