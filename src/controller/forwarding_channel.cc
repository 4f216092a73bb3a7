#include "brokerd/controller/forwarding_channel.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/api_versions_response.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/quorum/quorum_driver.h"
#include "controller/admin_requests.h"
#include "controller/commit_barrier.h"
#include "controller/envelope.h"

namespace brokerd::controller {
namespace {

using protocol::ErrorCode;

constexpr int16_t kCreateTopics = 19, kDeleteTopics = 20, kAlterConfigs = 33, kCreatePartitions = 37,
                  kAllocateProducerIds = 67, kAlterPartition = 56;
constexpr int8_t kTopicResource = 2, kBrokerResource = 4;
constexpr int64_t kAlterPartitionTimeoutMs = 2000;
constexpr int16_t kApiVersions = 18;
constexpr int64_t kServedApisRecheckMs = 60'000;

metadata::ForwardedAnswer answer_of(int16_t code, const std::optional<std::string>& message) {
  metadata::ForwardedAnswer a;
  a.error = static_cast<ErrorCode>(code);
  a.message = message.value_or("");
  return a;
}

// One answer per topic asked, in order.
std::vector<metadata::ForwardedAnswer> answers_of(const protocol::CreateTopicsResponse& resp, size_t n) {
  if (resp.topics.size() != n) throw protocol::DecodeError("the answer does not have one result per topic");
  std::vector<metadata::ForwardedAnswer> out;
  for (const auto& t : resp.topics) {
    metadata::ForwardedAnswer a;
    a.error = static_cast<ErrorCode>(t.error_code);
    a.message = t.error_message.value_or("");
    a.topic_id = t.topic_id;
    out.push_back(std::move(a));
  }
  return out;
}

metadata::ForwardedAnswer timed_out() { return answer_of(protocol::code(ErrorCode::request_timed_out), "no controller answered in time"); }

}  // namespace

ForwardingChannel::ForwardingChannel(quorum::QuorumDriver& quorum, metadata::MetadataStore& metadata, int32_t node_id,
                                     int64_t timeout_ms)
    : quorum_(quorum), image_(metadata), timeout_ms_(timeout_ms), client_(fmt::format("brokerd-{}-forward", node_id), static_cast<int>(timeout_ms),
              quorum.options().credentials) {}

template <typename T, typename Req, typename Decode, typename Retry>
T ForwardingChannel::call(int16_t api_key, int16_t version, const Req& req, Decode answer, Retry retry, T timed_out,
                          Answer when, int64_t timeout_ms) {
  protocol::Writer w;
  req.encode(w, version);
  const Bytes body = std::move(w).finish_bytes();
  std::unique_lock lock(mu_);
  const int64_t deadline = steady_clock_ms() + (timeout_ms > 0 ? std::min(timeout_ms, timeout_ms_) : timeout_ms_);
  while (!stopping_ && steady_clock_ms() < deadline) {
    const int32_t leader = quorum_.status().leader_id;
    const quorum::Voter* to = nullptr;
    for (const auto& v : quorum_.options().voters)
      if (v.id == leader) to = &v;
    if (to) {
      if (auto resp = client_.call(*to, api_key, version, body)) {
        try {
          protocol::Reader r(resp->data);
          T got = answer(r);
          if (!retry(got)) {
            if (when == Answer::once_held_here) {
              const int64_t answered_at = steady_clock_ms();
              const auto end = committed_end(*to);
              lock.unlock();
              hold(end, answered_at, deadline, api_key);
            }
            return got;
          }
        } catch (const protocol::DecodeError& e) {
          module_logger("quorum")->warn("controller {} sent a malformed answer to API key {}: {}", leader, api_key,
                                        e.what());
          client_.close();
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return timed_out;
}

template <typename Req, typename Decode>
metadata::ForwardedAnswer ForwardingChannel::call_one(int16_t api_key, int16_t version, const Req& req, Decode answer,
                                                     Answer when) {
  return call(api_key, version, req, answer,
              [](const metadata::ForwardedAnswer& a) { return a.error == ErrorCode::not_controller; }, timed_out(), when);
}

std::optional<int64_t> ForwardingChannel::committed_end(const quorum::Voter& controller) {
  // A new connection may reach a restarted process, whose high watermark starts lower.
  if (!client_.connected()) return std::nullopt;
  auto resp = client_.call(controller, kDescribeQuorum, kHighWatermarkVersion, high_watermark_request());
  if (!resp) return std::nullopt;
  return leader_high_watermark(resp->data, controller.id);
}

void ForwardingChannel::hold(std::optional<int64_t> end, int64_t answered_at_ms, int64_t deadline_ms, int16_t api_key) {
  if (end) {
    if (image_.wait_until_holds(*end, deadline_ms) || stopping_) return;
    module_logger("quorum")->warn("answering a change (API key {}) the controller made before this node's metadata "
                                  "image holds it: the image is at offset {}, the change below {}",
                                  api_key, image_.applied(), *end);
    return;
  }
  // The controller no longer leads, or would not say: this node's replica hears the quorum's
  // high watermark with every fetch, and one sent after the answer covers the change (in a
  // later millisecond: one sent in the same millisecond may have gone before the answer).
  while (!stopping_ && steady_clock_ms() < deadline_ms) {
    if (quorum_.status().confirmed_at_ms > answered_at_ms) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!stopping_)
    module_logger("quorum")->warn("answering a change (API key {}) the controller made before this node's metadata "
                                  "image is known to hold it (the image is at offset {})",
                                  api_key, image_.applied());
}

bool ForwardingChannel::leader_serves(int16_t api_key) {
  const int32_t leader = quorum_.status().leader_id;
  const quorum::Voter* to = nullptr;
  for (const auto& v : quorum_.options().voters)
    if (v.id == leader) to = &v;
  if (!to) return true;
  std::lock_guard lock(mu_);
  auto& known = served_[leader];
  const int64_t now = steady_clock_ms();
  if (known.checked_at_ms == 0 || now - known.checked_at_ms >= kServedApisRecheckMs) {
    auto body = client_.call(*to, kApiVersions, 0, Bytes{});
    if (!body) return true;  // no answer: the call that follows retries as any forwarded change does
    known.keys.clear();
    try {
      protocol::Reader r(body->data);
      protocol::ApiVersionsResponse resp;
      resp.decode(r, 0);
      for (const auto& k : resp.api_keys) known.keys.insert(k.api_key);
      known.known = true;
    } catch (const protocol::DecodeError&) {
      known.known = false;
    }
    known.checked_at_ms = now;
  }
  return !known.known || known.keys.contains(api_key);
}

bool ForwardingChannel::leader_takes_envelopes() {
  if (leader_serves(kEnvelope)) return true;
  module_logger("quorum")->warn("controller {} does not take Envelope (an older release): topics created through this "
                                "node have no owner until it is upgraded, and tenant limits do not count them",
                                quorum_.status().leader_id);
  return false;
}

std::vector<metadata::ForwardedAnswer> ForwardingChannel::create_topics(const std::vector<metadata::TopicSpec>& topics) {
  protocol::CreateTopicsRequest req;
  for (const auto& spec : topics) {
    auto& t = req.topics.emplace_back();
    t.name = spec.name;
    t.num_partitions = spec.assignment.empty() ? spec.partitions : -1;
    t.replication_factor = static_cast<int16_t>(spec.assignment.empty() ? spec.replication_factor : -1);
    for (size_t p = 0; p < spec.assignment.size(); ++p) {
      auto& a = t.assignments.emplace_back();
      a.partition_index = static_cast<int32_t>(p);
      a.broker_ids = spec.assignment[p];
    }
    for (const auto& [k, v] : spec.configs) {
      auto& c = t.configs.emplace_back();
      c.name = k;
      c.value = v;
    }
  }
  req.timeout_ms = static_cast<int32_t>(timeout_ms_);
  const size_t n = topics.size();
  auto decode = [n](protocol::Reader& r) {
    protocol::CreateTopicsResponse resp;
    resp.decode(r, kCreateTopicsVersion);
    return answers_of(resp, n);
  };
  // A controller that lost leadership answers NOT_CONTROLLER for all of them (it checks
  // first), so the whole request goes to the next one.
  auto retry = [](const std::vector<metadata::ForwardedAnswer>& got) {
    return std::any_of(got.begin(), got.end(), [](const auto& a) { return a.error == ErrorCode::not_controller; });
  };
  const std::vector<metadata::ForwardedAnswer> none(n, timed_out());
  const std::string& owner = topics.empty() ? std::string() : topics.front().owner;
  if (owner.empty() || !leader_takes_envelopes())
    return call(kCreateTopics, kCreateTopicsVersion, req, decode, retry, none, Answer::once_held_here);
  // The owner rides in an envelope: the controller creates the topics for that principal.
  const auto env = envelope_of(kCreateTopics, kCreateTopicsVersion, protocol::encode_body(req, kCreateTopicsVersion), owner);
  auto open = [n](protocol::Reader& r) {
    protocol::EnvelopeResponse resp;
    resp.decode(r, 0);
    if (resp.error_code != 0 || !resp.response_data)
      return std::vector<metadata::ForwardedAnswer>(n, answer_of(resp.error_code ? resp.error_code : protocol::code(ErrorCode::unknown_server_error),
                                                              "the controller refused the forwarded request"));
    protocol::Reader inner(*resp.response_data);
    protocol::decode_response_header(inner, kCreateTopics, kCreateTopicsVersion);
    protocol::CreateTopicsResponse created;
    created.decode(inner, kCreateTopicsVersion);
    return answers_of(created, n);
  };
  return call(kEnvelope, 0, env, open, retry, none, Answer::once_held_here);
}

metadata::ForwardedAnswer ForwardingChannel::delete_topic(const std::string& name) {
  protocol::DeleteTopicsRequest req;
  req.topics.emplace_back().name = name;
  req.timeout_ms = static_cast<int32_t>(timeout_ms_);
  return call_one(kDeleteTopics, kDeleteTopicsVersion, req, [](protocol::Reader& r) {
    protocol::DeleteTopicsResponse resp;
    resp.decode(r, kDeleteTopicsVersion);
    if (resp.responses.size() != 1) throw protocol::DecodeError("expected one topic");
    return answer_of(resp.responses[0].error_code, resp.responses[0].error_message);
  });
}

metadata::ForwardedAnswer ForwardingChannel::create_partitions(const std::string& name, int32_t total,
                                                              const std::vector<std::vector<int32_t>>& assignment) {
  protocol::CreatePartitionsRequest req;
  auto& t = req.topics.emplace_back();
  t.name = name;
  t.count = total;
  if (assignment.empty()) {
    t.assignments = std::nullopt;
  } else {
    t.assignments.emplace();
    for (const auto& replicas : assignment) t.assignments->emplace_back().broker_ids = replicas;
  }
  req.timeout_ms = static_cast<int32_t>(timeout_ms_);
  return call_one(kCreatePartitions, kCreatePartitionsVersion, req, [](protocol::Reader& r) {
    protocol::CreatePartitionsResponse resp;
    resp.decode(r, kCreatePartitionsVersion);
    if (resp.results.size() != 1) throw protocol::DecodeError("expected one topic");
    return answer_of(resp.results[0].error_code, resp.results[0].error_message);
  });
}

metadata::ForwardedAnswer ForwardingChannel::set_topic_configs(const std::string& name,
                                                              const std::map<std::string, std::string>& configs) {
  return alter_configs(kTopicResource, name, configs);
}

metadata::ForwardedAnswer ForwardingChannel::set_broker_configs(const std::string& resource,
                                                               const std::map<std::string, std::string>& configs) {
  return alter_configs(kBrokerResource, resource, configs);
}

metadata::ForwardedAnswer ForwardingChannel::alter_configs(int8_t resource_type, const std::string& name,
                                                          const std::map<std::string, std::string>& configs) {
  protocol::AlterConfigsRequest req;
  auto& res = req.resources.emplace_back();
  res.resource_type = resource_type;
  res.resource_name = name;
  for (const auto& [k, v] : configs) {
    auto& c = res.configs.emplace_back();
    c.name = k;
    c.value = v;
  }
  return call_one(kAlterConfigs, kAlterConfigsVersion, req, [](protocol::Reader& r) {
    protocol::AlterConfigsResponse resp;
    resp.decode(r, kAlterConfigsVersion);
    if (resp.responses.size() != 1) throw protocol::DecodeError("expected one resource");
    return answer_of(resp.responses[0].error_code, resp.responses[0].error_message);
  });
}

std::optional<metadata::ProducerIdBlock> ForwardingChannel::allocate_producer_ids(int32_t broker_id, int64_t broker_epoch) {
  protocol::AllocateProducerIdsRequest req;
  req.broker_id = broker_id;
  req.broker_epoch = broker_epoch;
  metadata::ProducerIdBlock block{broker_id, -1, 0};
  auto a = call_one(kAllocateProducerIds, kAllocateProducerIdsVersion, req, [&block](protocol::Reader& r) {
    protocol::AllocateProducerIdsResponse resp;
    resp.decode(r, kAllocateProducerIdsVersion);
    block.first = resp.producer_id_start;
    block.size = resp.producer_id_len;
    return answer_of(resp.error_code, std::nullopt);
  }, Answer::at_once);
  if (a.error != ErrorCode::none || block.size <= 0) return std::nullopt;
  return block;
}

std::vector<metadata::AlterPartitionAnswer> ForwardingChannel::alter_partitions(
    const std::vector<metadata::AlterPartitionItem>& items) {
  // One topic entry per topic id, in order of first appearance; where each item went.
  protocol::AlterPartitionRequest req;
  std::vector<std::pair<size_t, size_t>> slots;
  std::map<protocol::Uuid, size_t> topic_slot;
  for (const auto& item : items) {
    const auto& request = item.request;
    req.broker_id = request.leader;
    auto [it, added] = topic_slot.emplace(item.topic_id, req.topics.size());
    if (added) req.topics.emplace_back().topic_id = item.topic_id;
    auto& t = req.topics[it->second];
    slots.emplace_back(it->second, t.partitions.size());
    auto& p = t.partitions.emplace_back();
    p.partition_index = item.partition;
    p.leader_epoch = request.leader_epoch;
    p.partition_epoch = request.partition_epoch;
    for (size_t i = 0; i < request.new_isr.size(); ++i) {
      auto& b = p.new_isr_with_epochs.emplace_back();
      b.broker_id = request.new_isr[i];
      b.broker_epoch = i < request.broker_epochs.size() ? request.broker_epochs[i] : replication::kNoBrokerEpoch;
    }
  }
  using Answers = std::vector<metadata::AlterPartitionAnswer>;
  auto all = [&](protocol::ErrorCode e) {
    Answers out(items.size());
    for (auto& a : out) a.error = e;
    return out;
  };
  auto decode = [&](protocol::Reader& r) {
    protocol::AlterPartitionResponse resp;
    resp.decode(r, kAlterPartitionSendVersion);
    if (resp.error_code != 0) return all(static_cast<protocol::ErrorCode>(resp.error_code));
    Answers out(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      const auto [ts, ps] = slots[i];
      if (ts >= resp.topics.size() || ps >= resp.topics[ts].partitions.size() ||
          resp.topics[ts].partitions[ps].partition_index != items[i].partition) {
        out[i].error = protocol::ErrorCode::unknown_server_error;
        continue;
      }
      const auto& pr = resp.topics[ts].partitions[ps];
      out[i].error = static_cast<protocol::ErrorCode>(pr.error_code);
      out[i].assignment.leader = pr.leader_id;
      out[i].assignment.leader_epoch = pr.leader_epoch;
      out[i].assignment.isr = pr.isr;
      out[i].assignment.partition_epoch = pr.partition_epoch;
    }
    return out;
  };
  auto retry = [](const Answers& a) { return !a.empty() && a.front().error == protocol::ErrorCode::not_controller; };
  // Short: the leaders ask again, and a stop waits for this call.
  return call(kAlterPartition, kAlterPartitionSendVersion, req, decode, retry, all(protocol::ErrorCode::request_timed_out),
              Answer::at_once, kAlterPartitionTimeoutMs);
}

std::optional<Bytes> ForwardingChannel::forward(int16_t api_key, int16_t version, const Bytes& body) {
  struct Raw {
    std::optional<Bytes> body;
  };
  struct Passthrough {
    const Bytes& bytes;
    void encode(protocol::Writer& w, int16_t) const { w.raw(bytes); }
  };
  auto decode = [](protocol::Reader& r) {
    auto rest = r.take(r.remaining());
    return Raw{Bytes(rest.begin(), rest.end())};
  };
  return call(api_key, version, Passthrough{body}, decode, [](const Raw&) { return false; }, Raw{},
              changes_metadata(api_key) ? Answer::once_held_here : Answer::at_once)
      .body;
}

}  // namespace brokerd::controller
