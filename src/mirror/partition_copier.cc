#include "partition_copier.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "brokerd/partitions/mirror_status.h"
#include "brokerd/partitions/partition_call.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/messages/fetch_request.h"
#include "brokerd/protocol/messages/fetch_response.h"
#include "brokerd/protocol/messages/list_offsets_request.h"
#include "brokerd/protocol/messages/list_offsets_response.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::mirror {
namespace {

using partitions::Partition;
using partitions::PartitionMirrorState;
using protocol::ErrorCode;

constexpr int16_t kFetchVersion = 13;  // the first with topic ids: a recreated source topic is never read as the old one
constexpr int16_t kListOffsetsVersion = 7;

// What the home shard says before a fetch: this node still leads tp as a mirror of `link`,
// and where its log ends.
std::optional<int64_t> mirror_end(partitions::PartitionManager& pm, const partitions::TopicPartition& tp,
                                  const std::string& link) {
  auto r = partitions::call_on_partition(pm, tp, [&link](Partition& p) -> std::optional<int64_t> {
             if (!p.is_leader() || p.mirror_link != link || p.replica().lease_lost()) return std::nullopt;
             return p.log().log_end_offset();
           }).get();
  return r ? *r : std::nullopt;
}

// The source's earliest and latest offsets of one partition, or nullopt. One request each:
// a partition named twice in one ListOffsets is refused.
std::optional<std::pair<int64_t, int64_t>> source_bounds(SourceCluster& source, const quorum::Voter& broker,
                                                         const partitions::TopicPartition& tp) {
  int64_t bounds[2] = {-1, -1};
  const int64_t timestamps[2] = {-2, -1};  // earliest, latest
  for (int i = 0; i < 2; ++i) {
    protocol::ListOffsetsRequest req;
    req.replica_id = -1;
    auto& t = req.topics.emplace_back();
    t.name = tp.topic;
    auto& p = t.partitions.emplace_back();
    p.partition_index = tp.partition;
    p.timestamp = timestamps[i];
    std::string error;
    auto resp = source.call<protocol::ListOffsetsResponse>(broker, kListOffsetsVersion, req, error);
    if (!resp || resp->topics.empty() || resp->topics[0].partitions.empty()) return std::nullopt;
    const auto& pr = resp->topics[0].partitions[0];
    if (pr.error_code != 0) return std::nullopt;
    bounds[i] = pr.offset;
  }
  return std::pair{bounds[0], bounds[1]};
}

void set_state(PartitionMirrorState& s, const char* state, std::string message = {}) {
  s.state = state;
  s.message = std::move(message);
}

}  // namespace

CopyResult copy_round(const CopyOptions& options, partitions::PartitionManager& pm, partitions::MirrorStatus& status,
                      SourceCluster& source, const quorum::Voter& broker, const std::vector<MirroredPartition>& parts) {
  static auto log = module_logger("mirror");
  // Where each mirror stands; partitions this node no longer leads are left out.
  struct Asked {
    const MirroredPartition* part;
    int64_t offset;
  };
  std::vector<Asked> asked;
  protocol::FetchRequest req;
  req.replica_id = -1;
  req.max_wait_ms = options.wait_max_ms;
  req.min_bytes = 1;
  req.max_bytes = options.response_max_bytes;
  req.isolation_level = 0;
  req.session_epoch = -1;
  std::map<protocol::Uuid, size_t> topic_index;
  for (const auto& part : parts) {
    auto state = status.partition(options.link, part.tp);
    // A diverged mirror waits for an operator; a source-gone one is fetched again only while
    // the source's metadata still names its topic id (the link worker leaves it out otherwise).
    if (state && state->state == "diverged") continue;
    auto end = mirror_end(pm, part.tp, options.link);
    if (!end) continue;
    asked.push_back({&part, *end});
    auto [it, fresh] = topic_index.try_emplace(part.source_topic_id, req.topics.size());
    if (fresh) req.topics.emplace_back().topic_id = part.source_topic_id;
    auto& fp = req.topics[it->second].partitions.emplace_back();
    fp.partition = part.tp.partition;
    fp.fetch_offset = *end;
    fp.partition_max_bytes = options.partition_max_bytes;
  }
  if (asked.empty()) return CopyResult::idle;

  std::string error;
  auto resp = source.call<protocol::FetchResponse>(broker, kFetchVersion, req, error);
  const int64_t now = wall_clock_ms();
  if (!resp || resp->error_code != 0) {
    if (resp) error = fmt::format("source broker {} refused the fetch: {}", broker.id, protocol::error_name(static_cast<ErrorCode>(resp->error_code)));
    for (const auto& a : asked) {
      PartitionMirrorState s = status.partition(options.link, a.part->tp).value_or(PartitionMirrorState{});
      s.mirrored_end = a.offset;
      set_state(s, "error", error);
      status.set_partition(options.link, a.part->tp, s);
    }
    return CopyResult::failed;
  }
  std::map<std::pair<protocol::Uuid, int32_t>, const protocol::FetchResponse::PartitionData*> answers;
  for (const auto& t : resp->responses)
    for (const auto& p : t.partitions) answers[{t.topic_id, p.partition_index}] = &p;

  CopyResult result = CopyResult::idle;
  for (const auto& a : asked) {
    const auto& tp = a.part->tp;
    PartitionMirrorState s = status.partition(options.link, tp).value_or(PartitionMirrorState{});
    s.mirrored_end = a.offset;
    auto it = answers.find({a.part->source_topic_id, tp.partition});
    if (it == answers.end()) {
      set_state(s, "error", "the source's answer left the partition out");
      status.set_partition(options.link, tp, s);
      result = CopyResult::stale_metadata;
      continue;
    }
    const auto& pd = *it->second;
    const auto error_code = static_cast<ErrorCode>(pd.error_code);
    s.last_fetch_ms = now;
    switch (error_code) {
      case ErrorCode::none:
        break;
      case ErrorCode::offset_out_of_range: {
        auto bounds = source_bounds(source, broker, tp);
        if (!bounds) {
          set_state(s, "error", "the source has no offset " + std::to_string(a.offset) + " and did not say which it has");
          result = CopyResult::stale_metadata;
        } else if (a.offset < bounds->first) {
          // The source's retention deleted what was not copied yet: start over at its log
          // start, and say how much was lost.
          const int64_t start = bounds->first;
          auto done = partitions::call_on_partition(pm, tp, [&options, start](Partition& p) {
                        if (!p.is_leader() || p.mirror_link != options.link) return false;
                        p.restart_mirror_at(start, wall_clock_ms());
                        return true;
                      }).get();
          if (done && *done) {
            s.skipped_records += start - a.offset;
            s.mirrored_end = start;
            set_state(s, "mirroring",
                      fmt::format("the source deleted offsets {}..{} before they were mirrored", a.offset, start - 1));
            log->warn("link {}: {}: the source deleted offsets {}..{} before they were mirrored", options.link,
                      tp.dir_name(), a.offset, start - 1);
            result = CopyResult::ok;
          }
        } else if (a.offset > bounds->second) {
          set_state(s, "diverged",
                    fmt::format("this mirror ends at {}, past the source's end {}: the source lost records this "
                                "mirror holds; mirroring of the partition stopped",
                                a.offset, bounds->second));
          log->error("link {}: {}: {}", options.link, tp.dir_name(), s.message);
        }
        status.set_partition(options.link, tp, s);
        continue;
      }
      case ErrorCode::unknown_topic_id:
      case ErrorCode::inconsistent_topic_id:
        set_state(s, "source-gone",
                  fmt::format("source topic {} (id {}) no longer exists: deleted or recreated; mirroring of the "
                              "partition stopped",
                              tp.topic, a.part->source_topic_id.to_string()));
        log->warn("link {}: {}: {}", options.link, tp.dir_name(), s.message);
        status.set_partition(options.link, tp, s);
        continue;
      default:
        set_state(s, "error", fmt::format("source broker {}: {}", broker.id, protocol::error_name(error_code)));
        status.set_partition(options.link, tp, s);
        result = CopyResult::stale_metadata;
        continue;
    }
    s.source_high_watermark = pd.high_watermark;
    s.source_log_start = pd.log_start_offset;
    Bytes bytes = pd.records.is_null ? Bytes{} : pd.records.to_bytes();
    // Whole batches from our end on: those wholly below it are skipped (a batch that starts
    // below and ends past it is refused by the append), one the source cut at max_bytes is
    // left for the next round.
    size_t pos = 0, skip = 0;
    int64_t records = 0;
    while (bytes.size() - pos >= storage::batch_layout::header_size) {
      storage::RecordBatchView v(std::span<const std::byte>(bytes).subspan(pos));
      if (v.batch_length() <= 0 || v.size() > bytes.size() - pos) break;
      if (v.last_offset() < a.offset) {
        pos += v.size();
        skip = pos;
        continue;
      }
      records += v.last_offset() - v.base_offset() + 1;
      pos += v.size();
    }
    if (pos > skip) {
      std::span<std::byte> batches(bytes.data() + skip, pos - skip);
      const int64_t expected = a.offset;
      auto appended = partitions::call_on_partition(pm, tp, [&options, batches, expected](Partition& p) {
                        storage::AppendResult r;
                        if (!p.is_leader() || p.mirror_link != options.link ||
                            p.log().log_end_offset() != expected) {
                          r.error = ErrorCode::not_leader_or_follower;  // moved on meanwhile: drop the answer
                          return r;
                        }
                        return p.append_mirrored(batches, wall_clock_ms());
                      }).get();
      if (!appended) continue;
      if (appended->error == ErrorCode::none) {
        s.mirrored_end = appended->last_offset + 1;
        s.bytes_copied += static_cast<int64_t>(pos - skip);
        s.records_copied += records;
        set_state(s, "mirroring");
        result = CopyResult::ok;
      } else if (appended->error != ErrorCode::not_leader_or_follower) {
        set_state(s, "error", fmt::format("cannot append the source's batches at {}: {}", expected, appended->message));
        log->error("link {}: {}: {}", options.link, tp.dir_name(), s.message);
      }
    } else if (s.state != "mirroring" || !s.message.empty()) {
      set_state(s, "mirroring");
    }
    if (s.mirrored_end >= s.source_high_watermark) s.caught_up_ms = now;
    status.set_partition(options.link, tp, s);
  }
  return result;
}

}  // namespace brokerd::mirror
