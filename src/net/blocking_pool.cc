#include "brokerd/net/blocking_pool.h"

#include <boost/asio/thread_pool.hpp>

#include "brokerd/common/logger.h"

namespace brokerd::net {

struct BlockingPool::Impl {
  explicit Impl(size_t n) : pool(n) {}
  boost::asio::thread_pool pool;
};

BlockingPool::BlockingPool(size_t threads)
    : threads_(threads == 0 ? 1 : threads), impl_(std::make_unique<Impl>(threads_)) {}

BlockingPool::~BlockingPool() { join(); }

boost::asio::any_io_executor BlockingPool::executor() const { return impl_->pool.get_executor(); }

void BlockingPool::join() { impl_->pool.join(); }

void BlockingPool::log_post_failure(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    module_logger("net")->error("blocking pool task failed: {}", ex.what());
  } catch (...) {
    module_logger("net")->error("blocking pool task failed with a non-standard exception");
  }
}

}  // namespace brokerd::net
