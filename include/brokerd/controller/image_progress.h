#pragma once
// How far this node's metadata image has replayed the metadata log, and a wait until it holds
// every entry below an offset: a node answers a change it forwarded to the controller only
// once its own image holds it (forwarding_channel.h). Woken by every image the store
// publishes; the waits block, so call them off the reactors.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata

namespace brokerd::controller {

class ImageProgress {
 public:
  // Follows every image `metadata` publishes from now on.
  explicit ImageProgress(metadata::MetadataStore& metadata);

  // The offset of the last metadata log entry the image holds; -1 before any.
  int64_t applied() const;
  // Blocks until the image holds every entry below `end`, until the steady clock reaches
  // `deadline_ms`, or until stop(). True when the image holds them.
  bool wait_until_holds(int64_t end, int64_t deadline_ms);
  // Ends every wait, now and from now on (each returns what the image holds).
  void stop();

 private:
  struct State {
    mutable std::mutex mu;
    std::condition_variable changed;
    int64_t applied = -1;
    bool stopping = false;
  };
  // Shared with the store's publish hook, which lives as long as the store.
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace brokerd::controller
