#include "brokerd/transactions/marker_sender.h"

#include <algorithm>
#include <chrono>
#include <tuple>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/controller/controller_client.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/protocol/messages/write_txn_markers_request.h"
#include "brokerd/protocol/messages/write_txn_markers_response.h"

namespace brokerd::transactions {
namespace {

using protocol::ErrorCode;

constexpr int16_t kWriteTxnMarkers = 27;
constexpr int16_t kWriteTxnMarkersVersion = 1;
constexpr int kRetryPauseMs = 100;
constexpr size_t kMostPerRequest = 1000;  // partitions in one request

enum class Outcome { done, retry, fenced };

// Kafka's handling of a leader's answer to a marker (TransactionMarkerRequestCompletionHandler).
Outcome outcome_of(ErrorCode e) {
  switch (e) {
    case ErrorCode::none:
      return Outcome::done;
    case ErrorCode::transaction_coordinator_fenced:
    case ErrorCode::invalid_producer_epoch:
    case ErrorCode::producer_fenced:
      return Outcome::fenced;
    default:
      // NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION (a topic still in the metadata),
      // NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR: the marker must be written
      // before the transaction may complete, so it is sent again. Errors Kafka calls
      // impossible here are logged and sent again too: completing without the marker would
      // leave the partition's transaction open.
      return Outcome::retry;
  }
}

}  // namespace

struct MarkerSender::Job {
  MarkerJob spec;
  size_t remaining = 0;
  bool finished = false;
};

struct MarkerSender::Destination {
  std::vector<Pending> queue;
  std::thread thread;
};

MarkerSender::MarkerSender(int32_t node_id, metadata::MetadataStore& metadata, security::ClientCredentials credentials,
                           int request_timeout_ms)
    : node_id_(node_id),
      metadata_(metadata),
      credentials_(std::move(credentials)),
      request_timeout_ms_(request_timeout_ms) {
  retry_thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::milliseconds(kRetryPauseMs));
      if (stopping_ || unroutable_.empty()) continue;
      auto again = std::move(unroutable_);
      unroutable_.clear();
      lock.unlock();
      route(std::move(again));
      lock.lock();
    }
  });
}

MarkerSender::~MarkerSender() { stop(); }

void MarkerSender::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !retry_thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (retry_thread_.joinable()) retry_thread_.join();
  for (auto& [id, d] : destinations_)
    if (d->thread.joinable()) d->thread.join();
}

void MarkerSender::send(MarkerJob spec) {
  auto job = std::make_shared<Job>();
  job->remaining = spec.partitions.size();
  std::vector<Pending> pending;
  for (const auto& tp : spec.partitions) pending.push_back({job, tp});
  job->spec = std::move(spec);
  if (pending.empty()) {
    finish(job, ErrorCode::none);
    return;
  }
  route(std::move(pending));
}

void MarkerSender::route(std::vector<Pending> pending) {
  auto image = metadata_.image();
  std::vector<std::shared_ptr<Job>> completed;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    for (auto& p : pending) {
      if (p.job->finished) continue;
      const metadata::TopicMetadata* t = image->topic(p.partition.topic);
      const auto* a = t ? t->partition(p.partition.partition) : nullptr;
      if (!a) {
        // The topic was deleted (or shrank, which Kafka does not allow): nothing to mark.
        if (--p.job->remaining == 0) completed.push_back(p.job);
        continue;
      }
      const metadata::BrokerInfo* b = a->leader >= 0 ? image->broker(a->leader) : nullptr;
      if (!b || b->host.empty()) {
        unroutable_.push_back(std::move(p));
        continue;
      }
      auto& d = destinations_[a->leader];
      if (!d) {
        d = std::make_unique<Destination>();
        const int32_t broker = a->leader;
        d->thread = std::thread([this, broker] { run(broker); });
      }
      d->queue.push_back(std::move(p));
    }
  }
  wake_.notify_all();
  for (auto& job : completed) finish(job, ErrorCode::none);
}

void MarkerSender::finish(const std::shared_ptr<Job>& job, ErrorCode error) {
  {
    std::lock_guard lock(mu_);
    if (job->finished) return;
    job->finished = true;
  }
  if (job->spec.done) job->spec.done(error);
}

void MarkerSender::run(int32_t broker_id) {
  auto log = module_logger("transactions");
  controller::ControllerClient client("brokerd-" + std::to_string(node_id_) + "-txn-markers", request_timeout_ms_,
                                      credentials_);
  bool failing = false;
  for (;;) {
    std::vector<Pending> batch;
    {
      std::unique_lock lock(mu_);
      auto& queue = destinations_[broker_id]->queue;
      wake_.wait(lock, [&] { return stopping_ || !queue.empty(); });
      if (stopping_) return;
      const size_t n = std::min(queue.size(), kMostPerRequest);
      batch.assign(std::make_move_iterator(queue.begin()), std::make_move_iterator(queue.begin() + n));
      queue.erase(queue.begin(), queue.begin() + n);
    }
    // One marker per job, naming its partitions of this batch, in the order queued.
    protocol::WriteTxnMarkersRequest req;
    std::vector<Job*> order;
    for (const auto& p : batch) {
      if (p.job->finished) continue;
      size_t i = 0;
      while (i < order.size() && order[i] != p.job.get()) ++i;
      if (i == order.size()) {
        order.push_back(p.job.get());
        auto& m = req.markers.emplace_back();
        m.producer_id = p.job->spec.producer_id;
        m.producer_epoch = p.job->spec.producer_epoch;
        m.transaction_result = p.job->spec.result == TxnResult::commit;
        m.coordinator_epoch = p.job->spec.coordinator_epoch;
        m.transaction_version = static_cast<int8_t>(p.job->spec.txn_version);
      }
      auto& topics = req.markers[i].topics;
      auto t = std::find_if(topics.begin(), topics.end(), [&](const auto& x) { return x.name == p.partition.topic; });
      if (t == topics.end()) {
        topics.emplace_back().name = p.partition.topic;
        t = topics.end() - 1;
      }
      t->partition_indexes.push_back(p.partition.partition);
    }
    if (order.empty()) continue;

    auto image = metadata_.image();
    const metadata::BrokerInfo* b = image->broker(broker_id);
    std::map<std::tuple<Job*, std::string, int32_t>, ErrorCode> answers;
    bool answered = false;
    if (b && !b->host.empty()) {
      protocol::Writer w;
      req.encode(w, kWriteTxnMarkersVersion);
      const Bytes body = std::move(w).finish_bytes();
      const auto started = std::chrono::steady_clock::now();
      auto resp = client.call({broker_id, b->host, static_cast<uint16_t>(b->port)}, kWriteTxnMarkers,
                              kWriteTxnMarkersVersion, body);
      if (resp) {
        try {
          protocol::Reader r(resp->data);
          protocol::WriteTxnMarkersResponse answer;
          answer.decode(r, kWriteTxnMarkersVersion);
          // The answer lists the markers in the request's order.
          for (size_t i = 0; i < answer.markers.size() && i < order.size(); ++i)
            for (const auto& t : answer.markers[i].topics)
              for (const auto& part : t.partitions)
                answers[{order[i], t.name, part.partition_index}] = static_cast<ErrorCode>(part.error_code);
          answered = true;
          round_trips_.fetch_add(1);
          round_trip_micros_.fetch_add(static_cast<uint64_t>(
              std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count()));
        } catch (const protocol::DecodeError& e) {
          log->warn("broker {} sent a malformed WriteTxnMarkers answer: {}", broker_id, e.what());
          client.close();
        }
      }
    }
    if (!answered) {
      if (!failing) log->info("sending transaction markers to broker {} failed; retrying", broker_id);
      failing = true;
    } else if (failing) {
      log->info("sending transaction markers to broker {} again", broker_id);
      failing = false;
    }

    std::vector<Pending> again;
    std::vector<std::shared_ptr<Job>> completed;
    std::vector<std::pair<std::shared_ptr<Job>, ErrorCode>> fenced;
    {
      std::lock_guard lock(mu_);
      for (auto& p : batch) {
        if (p.job->finished) continue;
        auto it = answers.find({p.job.get(), p.partition.topic, p.partition.partition});
        const ErrorCode e = it == answers.end() ? ErrorCode::request_timed_out : it->second;
        switch (outcome_of(e)) {
          case Outcome::done:
            if (--p.job->remaining == 0) completed.push_back(p.job);
            break;
          case Outcome::fenced:
            fenced.emplace_back(p.job, e);
            break;
          case Outcome::retry:
            if (answered && e != ErrorCode::not_leader_or_follower && e != ErrorCode::unknown_topic_or_partition &&
                e != ErrorCode::request_timed_out && e != ErrorCode::not_enough_replicas &&
                e != ErrorCode::not_enough_replicas_after_append)
              log->warn("broker {} refused the marker of producer {} on {}-{}: {}; sending it again", broker_id,
                        p.job->spec.producer_id, p.partition.topic, p.partition.partition, protocol::error_name(e));
            again.push_back(std::move(p));
            break;
        }
      }
    }
    for (auto& job : completed) finish(job, ErrorCode::none);
    for (auto& [job, e] : fenced) finish(job, e);
    if (!again.empty()) {
      std::unique_lock lock(mu_);
      // Routed again by the retry pass, after its pause (a moved leader, a full ISR).
      for (auto& p : again) unroutable_.push_back(std::move(p));
      if (!answered) wake_.wait_for(lock, std::chrono::milliseconds(kRetryPauseMs), [&] { return stopping_; });
    }
  }
}

}  // namespace brokerd::transactions
