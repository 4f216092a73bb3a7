#include "http/errors.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cctype>

namespace brokerd::http {

unsigned status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::none: return 200;
    case ErrorCode::invalid_request:
    case ErrorCode::invalid_partitions:
    case ErrorCode::invalid_replication_factor:
    case ErrorCode::invalid_replica_assignment:
    case ErrorCode::invalid_topic_exception:
    case ErrorCode::invalid_config:
    case ErrorCode::invalid_record:
    case ErrorCode::corrupt_message:
    case ErrorCode::invalid_timestamp:
    case ErrorCode::invalid_group_id:
    case ErrorCode::invalid_commit_offset_size:
    case ErrorCode::offset_metadata_too_large:
    case ErrorCode::invalid_required_acks:
    case ErrorCode::unsupported_compression_type:
    case ErrorCode::unsupported_version:
      return 400;
    case ErrorCode::sasl_authentication_failed:
      return 401;
    case ErrorCode::topic_authorization_failed:
    case ErrorCode::group_authorization_failed:
    case ErrorCode::cluster_authorization_failed:
    case ErrorCode::transactional_id_authorization_failed:
    case ErrorCode::policy_violation:
      return 403;
    case ErrorCode::unknown_topic_or_partition:
    case ErrorCode::unknown_topic_id:
    case ErrorCode::group_id_not_found:
      return 404;
    case ErrorCode::topic_already_exists:
    case ErrorCode::unknown_member_id:
    case ErrorCode::illegal_generation:
    case ErrorCode::rebalance_in_progress:
    case ErrorCode::fenced_instance_id:
    case ErrorCode::stale_member_epoch:
    case ErrorCode::fenced_member_epoch:
      return 409;
    case ErrorCode::message_too_large:
    case ErrorCode::record_list_too_large:
      return 413;
    case ErrorCode::offset_out_of_range:
      return 416;
    case ErrorCode::throttling_quota_exceeded:
      return 429;
    case ErrorCode::not_leader_or_follower:
    case ErrorCode::leader_not_available:
    case ErrorCode::not_enough_replicas:
    case ErrorCode::not_enough_replicas_after_append:
    case ErrorCode::coordinator_not_available:
    case ErrorCode::not_coordinator:
    case ErrorCode::coordinator_load_in_progress:
    case ErrorCode::request_timed_out:
    case ErrorCode::kafka_storage_error:
    case ErrorCode::not_controller:
    case ErrorCode::fenced_leader_epoch:
    case ErrorCode::unknown_leader_epoch:
    case ErrorCode::broker_not_available:
    case ErrorCode::replica_not_available:
    case ErrorCode::network_exception:
    case ErrorCode::unstable_offset_commit:
      return 503;
    default:
      return 500;
  }
}

std::string json_error_name(ErrorCode code) {
  std::string name(protocol::error_name(code));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

Reply error_reply(ErrorCode code, std::string_view message, int retry_after_s) {
  Reply r;
  r.status = status_of(code);
  boost::json::object body;
  body["error_code"] = protocol::code(code);
  body["error"] = json_error_name(code);
  body["message"] = message;
  r.body = boost::json::serialize(body);
  if (r.status == 503 || r.status == 429) r.headers.emplace_back("Retry-After", std::to_string(std::max(1, retry_after_s)));
  return r;
}

Reply bad_request(std::string_view message) { return error_reply(ErrorCode::invalid_request, message); }

Reply not_found(std::string_view message) { return error_reply(ErrorCode::unknown_topic_or_partition, message); }

}  // namespace brokerd::http
