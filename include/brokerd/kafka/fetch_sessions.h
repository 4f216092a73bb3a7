#pragma once
// Incremental fetch sessions (KIP-227). A consumer or follower of many partitions names them
// all once (session epoch 0) and from then on sends only what changed: partitions added or
// whose fetch offset moved, and partitions to forget. The broker keeps the rest, reads every
// partition of the session, and answers only partitions with something new (records, an
// error, a moved high watermark, last stable offset or log start).
//
//   epoch -1: a full fetch without a session (and the end of session_id, if given)
//   epoch  0: a full fetch that opens a session (closing session_id, if given); the answer
//             carries the new id, or 0 when the cache is full
//   epoch  n: the n-th incremental fetch of session_id (FETCH_SESSION_ID_NOT_FOUND,
//             INVALID_FETCH_SESSION_EPOCH, FETCH_SESSION_TOPIC_ID_ERROR otherwise)
//
// The cache holds max.incremental.fetch.session.cache.slots sessions. When it is full, a new
// session takes the place of one unused for two minutes, or else of a smaller one. No clocks
// or sockets: times are passed in. Thread-safe.
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/uuid.h"

namespace brokerd::kafka {

// A partition as a fetch request names it: by topic name (Fetch < v13) or topic id.
struct SessionKey {
  std::string topic;
  protocol::Uuid topic_id;
  int32_t partition = 0;
  bool operator==(const SessionKey&) const = default;
};

struct SessionKeyHash {
  size_t operator()(const SessionKey& k) const;
};

// What the client last asked of a partition, and what the last answer told it.
struct SessionPartition {
  SessionKey key;
  int64_t fetch_offset = 0;
  int32_t max_bytes = 0;
  int32_t current_leader_epoch = -1;
  int64_t requester_log_start = -1;  // a follower's own log start (Fetch v5+)
  static constexpr int64_t kNeverSent = -2;
  int64_t high_watermark = kNeverSent;
  int64_t last_stable_offset = kNeverSent;
  int64_t log_start_offset = kNeverSent;
};

struct FetchSessionRequest {
  int32_t session_id = 0;
  int32_t epoch = -1;
  int32_t replica_id = -1;
  bool topic_ids = false;  // Fetch v13+
  std::vector<SessionPartition> partitions;  // as sent: added, or with new offsets or limits
  std::vector<SessionKey> forgotten;
};

// What one partition's read found, as the answer will say it.
struct PartitionAnswer {
  bool has_records = false;
  protocol::ErrorCode error = protocol::ErrorCode::none;
  int64_t high_watermark = -1;
  int64_t last_stable_offset = -1;
  int64_t log_start_offset = -1;
};

class FetchSessionCache {
 public:
  static constexpr int64_t kEvictableAfterMs = 120'000;

  explicit FetchSessionCache(size_t slots, uint64_t seed = std::random_device{}());

  // How to serve one fetch.
  struct Context {
    protocol::ErrorCode error = protocol::ErrorCode::none;  // answer this alone, no partitions
    int32_t session_id = 0;                                  // the answer's session id
    bool incremental = false;                                // answer only what changed
    std::vector<SessionPartition> partitions;                // to read, in this order
  };
  Context begin(const FetchSessionRequest& r, int64_t now_ms);

  // After the reads of a fetch that has a session (`answers` in the order of the context's
  // partitions): records what the answer tells the client and returns, per partition,
  // whether it is in the answer (all of them for a new session's full answer). Partitions
  // that returned records move to the end of the session, so that a response budget spent
  // on the first ones does not starve the others.
  std::vector<bool> finish(const Context& ctx, const std::vector<PartitionAnswer>& answers, int64_t now_ms);

  size_t size() const;
  size_t partitions() const;  // over every session

 private:
  struct Session {
    int32_t id = 0;
    int32_t next_epoch = 1;
    int32_t replica_id = -1;
    bool topic_ids = false;
    int64_t last_used_ms = 0;
    std::vector<SessionPartition> order;
    std::unordered_map<SessionKey, size_t, SessionKeyHash> index;  // into order
    void reindex();
  };
  // Makes room for a session of `size` partitions: true when there is a free slot now.
  bool make_room(size_t size, int64_t now_ms);
  int32_t new_id();

  const size_t slots_;
  mutable std::mutex mu_;
  std::mt19937 rng_;
  std::unordered_map<int32_t, Session> sessions_;
};

}  // namespace brokerd::kafka
