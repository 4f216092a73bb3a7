// The metadata store's own work: publishing images, replaying committed entries and
// snapshots, and committing a change through the quorum. Each domain's changes live in
// their own files (topic_changes.cc, partition_changes.cc, broker_changes.cc, acl_changes.cc, ...).
#include "brokerd/metadata/metadata_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <random>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/wire.h"
#include "metadata/metadata_records.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

MetadataStore::MetadataStore(std::string cluster_id, int32_t node_id)
    : self_id_(node_id), placement_cursor_(static_cast<uint32_t>(std::random_device{}())) {
  auto image = std::make_shared<MetadataImage>();
  image->cluster_id = std::move(cluster_id);
  image_.store(std::move(image));
  producer_ids_ = std::make_unique<ProducerIdManager>([this, node_id] { return allocate_producer_ids(node_id, -1); });
}

MetadataStore::~MetadataStore() = default;

void MetadataStore::publish(std::shared_ptr<MetadataImage> next) {
  next->seal();
  std::shared_ptr<const MetadataImage> published = next;
  image_.store(std::move(next));
  std::lock_guard lock(publish_mutex_);
  for (const auto& hook : publish_hooks_) hook(published);
  published_.notify_all();
}

void MetadataStore::wait_for_image(const std::function<bool(const MetadataImage&)>& done) {
  std::unique_lock lock(publish_mutex_);
  published_.wait_for(lock, std::chrono::seconds(10), [&] { return done(*image()); });
}

void MetadataStore::on_publish(std::function<void(std::shared_ptr<const MetadataImage>)> fn) {
  std::lock_guard lock(publish_mutex_);
  publish_hooks_.push_back(std::move(fn));
}

int32_t MetadataStore::controller_id() const { return quorum_ ? quorum_->status().leader_id : -1; }

int32_t MetadataStore::controller_for_clients() const {
  auto img = image();
  if (img->live(self_id_)) return self_id_;
  if (const int32_t leader = controller_id(); img->live(leader)) return leader;
  for (const auto& b : img->brokers) {
    if (!b.fenced) return b.node_id;
  }
  return -1;
}

int64_t MetadataStore::image_age_ms() const {
  if (!quorum_) return 0;
  const int64_t at = quorum_->status().confirmed_at_ms;
  return at < 0 ? std::numeric_limits<int64_t>::max() : std::max<int64_t>(0, steady_clock_ms() - at);
}

bool MetadataStore::leads() const {
  if (!quorum_) return false;
  auto s = quorum_->status();
  return s.role == raft::Role::leader && s.caught_up;
}

bool MetadataStore::wait_until_caught_up(const std::function<bool()>& stop) {
  auto log = module_logger("metadata");
  auto next_note = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!quorum_ || !quorum_->status().caught_up) {
    if (stop()) return false;
    if (std::chrono::steady_clock::now() >= next_note) {
      auto s = quorum_ ? quorum_->status() : quorum::QuorumStatus{};
      log->info("waiting for the metadata quorum (leader {}, epoch {}, applied {} of {})", s.leader_id, s.epoch,
                s.applied_offset, s.high_watermark);
      next_note += std::chrono::seconds(5);
    }
  }
  auto image = this->image();
  log->info("metadata replayed: {} topics, last offset {}", image->topic_count(), image->offset);
  return true;
}

void MetadataStore::apply(const std::vector<raft::Entry>& entries) {
  auto next = std::make_shared<MetadataImage>(*image());
  for (const auto& e : entries) {
    next->offset = e.offset;
    if (e.control) continue;
    try {
      apply_change(std::as_bytes(std::span<const char>(e.payload.data(), e.payload.size())), *next);
    } catch (const protocol::DecodeError& err) {
      // Committed bytes that do not decode: every replica skips them alike.
      module_logger("metadata")->error("metadata entry at offset {} does not decode: {}", e.offset, err.what());
    }
  }
  publish(std::move(next));
}

std::function<std::string()> MetadataStore::snapshot() {
  return [image = image()] { return encode_change(image_records(*image)); };
}

void MetadataStore::load_snapshot(const raft::Snapshot& snapshot) {
  auto next = std::make_shared<MetadataImage>();
  auto current = image();
  next->cluster_id = current->cluster_id;
  apply_change(std::as_bytes(std::span<const char>(snapshot.data.data(), snapshot.data.size())), *next);
  next->offset = snapshot.id.offset - 1;
  publish(std::move(next));
}

ErrorCode MetadataStore::commit(const std::vector<Bytes>& records, std::string* message,
                                std::chrono::milliseconds wait) {
  if (!quorum_) {
    *message = "no metadata quorum";
    return ErrorCode::not_controller;
  }
  auto future = quorum_->propose(encode_change(records));
  if (future.wait_for(wait) != std::future_status::ready) {
    *message = fmt::format("the metadata change was not committed within {} ms", wait.count());
    return ErrorCode::request_timed_out;
  }
  auto result = future.get();
  if (result.ok) return ErrorCode::none;
  *message = result.error;
  return ErrorCode::not_controller;
}

MetadataStore::ChangeAnswer MetadataStore::commit_settings(const std::vector<Bytes>& records) {
  if (!leads()) return {ErrorCode::not_controller, "This node is not the active controller."};
  if (records.empty()) return {};
  std::lock_guard lock(write_mutex_);
  ChangeAnswer answer;
  answer.error = commit(records, &answer.message);
  return answer;
}

}  // namespace brokerd::metadata
