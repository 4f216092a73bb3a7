#include "brokerd/replication/bugs.h"

namespace brokerd::replication {
namespace {

constexpr BugInfo kBugs[] = {
    {"hw-before-isr", Bug::hw_before_isr,
     "advance the high watermark before the slowest in-sync follower has the batch"},
    {"ack-after-leader-write", Bug::ack_after_leader_write,
     "acknowledge acks=all once the leader alone has written the batch"},
    {"elect-outside-isr", Bug::elect_outside_isr, "the controller elects any live replica, in sync or not"},
    {"skip-truncation", Bug::skip_truncation,
     "a follower keeps its log past the end of its last leader epoch on the new leader"},
    {"isr-before-caught-up", Bug::isr_before_caught_up,
     "a follower rejoins the ISR on its first fetch, before it reaches the high watermark"},
    {"forget-epoch-cache", Bug::forget_epoch_cache, "the leader-epoch cache is empty after a restart"},
    {"not-written-after-fetch", Bug::not_written_after_fetch,
     "answer a waiting produce \"not written\" when leadership is lost although a follower was sent its batch"},
    {"stale-alter-answer", Bug::stale_alter_answer,
     "any answer ends the pending ISR proposal (one to an earlier proposal, a refusal whose outcome is open), whose "
     "new members then no longer hold back the high watermark though the controller may have taken them"},
};

}  // namespace

std::span<const BugInfo> known_bugs() { return kBugs; }

std::optional<Bug> bug_named(std::string_view name) {
  for (const auto& b : kBugs)
    if (name == b.name) return b.bug;
  return std::nullopt;
}

}  // namespace brokerd::replication
