#pragma once
// Cold-read protection: make sure a file range sits in the page cache before a reactor
// thread sendfile()s it, faulting it in on the blocking pool when it does not.
#include <boost/asio/awaitable.hpp>

#include <cstdint>

#include "brokerd/common/bytes.h"

namespace brokerd::net {

class BlockingPool;

// True when every page of [position, position + size) of fd is in the page cache.
// Never blocks on disk. Returns false when it cannot tell.
bool is_resident(int fd, uint64_t position, uint64_t size);

// Reads the range on a blocking-pool thread (which leaves it in the page cache). Blocks.
void fault_in(int fd, uint64_t position, uint64_t size);

// Returns at once when the slice is resident; otherwise faults it in on `pool` first.
boost::asio::awaitable<void> ensure_resident(BlockingPool& pool, const brokerd::FileSlice& slice);

}  // namespace brokerd::net
