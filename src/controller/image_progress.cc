#include "brokerd/controller/image_progress.h"

#include <algorithm>
#include <chrono>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/clock.h"

namespace brokerd::controller {

ImageProgress::ImageProgress(metadata::MetadataStore& metadata) {
  metadata.on_publish([state = state_](std::shared_ptr<const metadata::MetadataImage> image) {
    {
      std::lock_guard lock(state->mu);
      state->applied = image->offset;
    }
    state->changed.notify_all();
  });
  // An image published before the hook was in place.
  std::lock_guard lock(state_->mu);
  state_->applied = std::max(state_->applied, metadata.image()->offset);
}

int64_t ImageProgress::applied() const {
  std::lock_guard lock(state_->mu);
  return state_->applied;
}

bool ImageProgress::wait_until_holds(int64_t end, int64_t deadline_ms) {
  std::unique_lock lock(state_->mu);
  while (state_->applied < end - 1 && !state_->stopping) {
    const int64_t left = deadline_ms - steady_clock_ms();
    if (left <= 0) break;
    state_->changed.wait_for(lock, std::chrono::milliseconds(left));
  }
  return state_->applied >= end - 1;
}

void ImageProgress::stop() {
  {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
  }
  state_->changed.notify_all();
}

}  // namespace brokerd::controller
