#pragma once
// The descriptors partition logs may hold at once, node-wide (log.open.files.max). Segment
// files take one each from the budget; when it is spent, opening another fails with EMFILE
// and the partition goes offline, while the descriptors outside the budget keep serving
// connections, the metadata log and everything else.
//
// The budget is split into one share per shard: a thread that owns a shard's logs takes from
// that shard's share and, when it is spent, frees descriptors by releasing its own least
// recently used logs, so one shard holding many files never starves another.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>

#include "brokerd/common/bytes.h"

namespace brokerd::storage {

// Sets the budget; 0 means no limit (the default, for tools and tests).
void set_open_files_budget(int64_t max);
int64_t open_files_budget();
// Into how many shares the budget is split (one per shard; 1 by default, at most 256).
void set_open_files_shares(size_t shares);
// Descriptors held now by segment files, node-wide and charged to one share.
int64_t open_files_in_use();
int64_t open_files_in_use(size_t share);
// A share's part of the budget: budget / shares, the remainder spread over the first shares.
int64_t open_files_share_limit(size_t share);

// The budget a node takes when log.open.files.max is 0: its RLIMIT_NOFILE minus a reserve
// for everything else (a quarter, at least min(1024, half)).
int64_t derived_open_files_budget(int64_t rlimit_nofile);

// The connections a node may hold at once under an open files limit, when its partitions take
// `partition_budget` descriptors: what the limit leaves after that budget, its margin
// (open_files_margin) and a reserve for the node's own files, sockets and pipes (metadata
// log, listeners, reactors, checkpoints: max(24, a sixteenth of the limit); an idle node on two
// reactors holds about 23). At least 1.
// Connections and partitions so never take each other's descriptors.
int64_t derived_max_connections(int64_t rlimit_nofile, int64_t partition_budget);

// How this thread frees descriptors when its share is spent: it releases the files of some of
// its least recently used logs (Log::release_files) and says whether it released any. Each
// thread that owns logs installs its own, since only the owner thread may touch a log: a
// reactor (or a loader thread at start) for one shard's logs, with that shard's `share`; a
// thread that owns every shard at once (start's last step, stop) with no share (-1), taking
// from the budget as a whole. Empty: none.
using Evictor = std::function<bool()>;
void set_thread_evictor(Evictor fn, int share = -1);

// How far past the budget opens may go, across all shares, when the evictor could not free a
// descriptor at once (responses being sent and syncs may hold them): max(budget / 8, 8).
// Past it, opens fail with EMFILE.
int64_t open_files_margin(int64_t budget);
// True while `share` holds more than its part, or files charged to no share take the node
// past its budget: the shard then releases some of its least recently used logs every tick
// until it is not.
bool over_open_files_budget(size_t share);

// Opens `path` with `flags` (and mode 0644) as a budgeted descriptor, charged to this thread's
// share and released when the last holder of the handle lets go. When the share is spent it
// asks this thread's evictor until the share has room or nothing more can be released, then
// takes from the margin. Throws std::system_error (EMFILE when share and margin are spent, or
// open's errno).
// Unbudgeted (`budgeted` false), a plain descriptor with the same errors.
std::shared_ptr<const FileHandle> open_segment_file(const std::filesystem::path& path, int flags, bool budgeted);

}  // namespace brokerd::storage
