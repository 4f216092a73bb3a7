#include "brokerd/metadata/elect_leaders_request.h"

#include <map>
#include <string>

#include "brokerd/metadata/metadata_store.h"

namespace brokerd::metadata {

using protocol::ErrorCode;
using protocol::ElectLeadersResponse;

protocol::ElectLeadersResponse answer_elect_leaders(MetadataStore& store, const protocol::ElectLeadersRequest& req,
                                                    int16_t version) {
  ElectLeadersResponse resp;
  std::optional<std::vector<ElectionTarget>> targets;
  if (req.topic_partitions) {
    targets.emplace();
    for (const auto& t : *req.topic_partitions)
      for (int32_t p : t.partitions) targets->push_back({t.topic, p});
  }
  const int8_t type = version >= 1 ? req.election_type : 0;
  MetadataStore::ElectionAnswer answer;
  if (type != static_cast<int8_t>(ElectionType::preferred) && type != static_cast<int8_t>(ElectionType::unclean)) {
    answer.error = ErrorCode::invalid_request;
    answer.message = "Unknown election type " + std::to_string(type) + ".";
  } else {
    answer = store.elect_leaders(targets, static_cast<ElectionType>(type));
  }
  if (answer.error != ErrorCode::none) {
    // The whole request failed: said once (v1+) and for every partition it named.
    resp.error_code = protocol::code(answer.error);
    if (targets)
      for (const auto& t : *targets) answer.results.push_back({t.topic, t.partition, answer.error, answer.message});
  }
  std::map<std::string, size_t> index;  // topic -> its entry, in the order first answered
  for (const auto& r : answer.results) {
    auto [it, added] = index.try_emplace(r.topic, resp.replica_election_results.size());
    if (added) resp.replica_election_results.emplace_back().topic = r.topic;
    auto& p = resp.replica_election_results[it->second].partition_result.emplace_back();
    p.partition_id = r.partition;
    p.error_code = protocol::code(r.error);
    if (!r.message.empty()) p.error_message = r.message;
    else p.error_message = std::nullopt;
  }
  return resp;
}

}  // namespace brokerd::metadata
