#pragma once
// The ControllerChannel of a node: sends each forwarded metadata change to the quorum's
// current leader on its controller listener, and retries with the next leader while the
// answer is NOT_CONTROLLER or the call fails, until `timeout_ms` has passed (then
// REQUEST_TIMED_OUT). Calls are serialised (admin changes are rare) and block.
//
// A metadata change the controller made is answered only once this node's metadata image
// holds it too (controller/commit_barrier.h), so that a client that reads from this node
// right after the answer sees its change: the wait is bounded by what is left of the
// timeout, and when it runs out the controller's answer is returned all the same (the change
// is made; a REQUEST_TIMED_OUT would have the client retry a change that took effect), with
// a warning. AllocateProducerIds and AlterPartition, which no client reads back, are answered
// at once.
#include <atomic>
#include <map>
#include <set>
#include <mutex>
#include <optional>

#include "brokerd/metadata/controller_channel.h"
#include "brokerd/controller/controller_client.h"
#include "brokerd/controller/image_progress.h"

namespace brokerd::quorum {
class QuorumDriver;
}

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata

namespace brokerd::controller {

class ForwardingChannel final : public metadata::ControllerChannel {
 public:
  ForwardingChannel(quorum::QuorumDriver& quorum, metadata::MetadataStore& metadata, int32_t node_id,
                    int64_t timeout_ms);

  std::vector<metadata::ForwardedAnswer> create_topics(const std::vector<metadata::TopicSpec>& topics) override;
  metadata::ForwardedAnswer delete_topic(const std::string& name) override;
  metadata::ForwardedAnswer create_partitions(const std::string& name, int32_t total,
                                             const std::vector<std::vector<int32_t>>& assignment) override;
  metadata::ForwardedAnswer set_topic_configs(const std::string& name,
                                             const std::map<std::string, std::string>& configs) override;
  metadata::ForwardedAnswer set_broker_configs(const std::string& resource,
                                              const std::map<std::string, std::string>& configs) override;
  std::optional<metadata::ProducerIdBlock> allocate_producer_ids(int32_t broker_id, int64_t broker_epoch) override;
  std::vector<metadata::AlterPartitionAnswer> alter_partitions(const std::vector<metadata::AlterPartitionItem>& items) override;
  std::optional<Bytes> forward(int16_t api_key, int16_t version, const Bytes& body) override;
  bool leader_serves(int16_t api_key) override;
  // From now on no call waits for a controller: a call in flight gives up at once, the others
  // at their next retry (a change waiting then gets REQUEST_TIMED_OUT). At shutdown, when the
  // other nodes may be stopping too and no quorum is left, an ISR change or an admin request
  // in flight would otherwise hold the stop for the whole forwarding timeout.
  void stop() {
    stopping_ = true;
    client_.interrupt();
    image_.stop();
  }

 private:
  // When a call returns the controller's answer: at once, or once this node's image holds
  // what the controller had committed by then.
  enum class Answer { at_once, once_held_here };

  // AlterConfigs of one resource: its whole set of configs.
  metadata::ForwardedAnswer alter_configs(int8_t resource_type, const std::string& name,
                                         const std::map<std::string, std::string>& configs);
  // Calls the leader until `answer` (which decodes a response body) returns something that
  // `retry` does not want sent again (NOT_CONTROLLER), or time runs out (then `timed_out`).
  template <typename T, typename Req, typename Decode, typename Retry>
  T call(int16_t api_key, int16_t version, const Req& req, Decode answer, Retry retry, T timed_out, Answer when,
         int64_t timeout_ms = 0);
  template <typename Req, typename Decode>
  metadata::ForwardedAnswer call_one(int16_t api_key, int16_t version, const Req& req, Decode answer,
                                    Answer when = Answer::once_held_here);
  // The high watermark of `controller`, which has just answered on the open connection: the
  // end of what it had committed when it answered; nullopt when it cannot tell (mu_ held).
  std::optional<int64_t> committed_end(const quorum::Voter& controller);
  // Waits until this node's image holds everything below `end`; without one, until this
  // node's replica has confirmed it holds what the quorum committed, by a fetch sent after
  // `answered_at_ms` (raft::RaftNode::confirmed_at). Bounded by `deadline_ms`. mu_ not held.
  void hold(std::optional<int64_t> end, int64_t answered_at_ms, int64_t deadline_ms, int16_t api_key);

  // Whether the quorum's leader takes Envelope (58), which carries a client's principal with
  // a forwarded CreateTopics. A controller of an older release does not, and gets the plain
  // request (during a rolling upgrade).
  bool leader_takes_envelopes();

  quorum::QuorumDriver& quorum_;
  ImageProgress image_;
  const int64_t timeout_ms_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  ControllerClient client_;
  struct ServedApis {
    std::set<int16_t> keys;
    bool known = false;  // false: the controller did not answer ApiVersions understandably
    int64_t checked_at_ms = 0;
  };
  std::map<int32_t, ServedApis> served_;  // by controller id (mu_)
};

}  // namespace brokerd::controller
