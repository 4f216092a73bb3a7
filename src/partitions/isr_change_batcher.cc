#include "brokerd/partitions/isr_change_batcher.h"

#include <algorithm>

#include "brokerd/metadata/metadata_store.h"

namespace brokerd::partitions {

IsrChangeBatcher::IsrChangeBatcher(metadata::MetadataStore& store, Deliver deliver)
    : store_(store), deliver_(std::move(deliver)), worker_("isr-changes") {}

IsrChangeBatcher::~IsrChangeBatcher() { stop(); }

void IsrChangeBatcher::submit(Change change) {
  std::lock_guard lock(mu_);
  pending_.push_back(std::move(change));
  // The first change queued since the last send starts one; later ones join it.
  if (pending_.size() == 1) worker_.post([this] { send_pending(); });
}

void IsrChangeBatcher::stop() { worker_.stop(); }

void IsrChangeBatcher::send_pending() {
  std::vector<Change> changes;
  {
    std::lock_guard lock(mu_);
    changes.swap(pending_);
  }
  for (size_t from = 0; from < changes.size(); from += kMaxPerCall) {
    const size_t to = std::min(changes.size(), from + kMaxPerCall);
    std::vector<metadata::AlterPartitionItem> items;
    items.reserve(to - from);
    for (size_t i = from; i < to; ++i) items.push_back(changes[i].item);
    const auto answers = store_.alter_partitions(items);
    for (size_t i = from; i < to; ++i) deliver_(changes[i], answers[i - from]);
  }
}

}  // namespace brokerd::partitions
