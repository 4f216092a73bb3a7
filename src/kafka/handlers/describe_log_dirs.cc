// DescribeLogDirs: every log dir of this node with the size of each partition it holds
// (all partitions, or the requested ones), and from v4 the file system's total and usable
// bytes. A partition moving to another dir (AlterReplicaLogDirs) is listed there too, as a
// future replica with the bytes copied so far and the offsets it trails by; otherwise the
// offset lag is 0.
#include <sys/statvfs.h>

#include <map>
#include <set>

#include "brokerd/partitions/partition_manager.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/describe_log_dirs_request.h"
#include "brokerd/protocol/messages/describe_log_dirs_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::DescribeLogDirsRequest;
using protocol::DescribeLogDirsResponse;
namespace fs = std::filesystem;

std::string dir_name(const fs::path& p) { return fs::absolute(p).lexically_normal().string(); }

struct Space {
  int64_t total = -1;
  int64_t usable = -1;
};

Space space_of(const fs::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return {};
  return {static_cast<int64_t>(st.f_blocks) * static_cast<int64_t>(st.f_frsize),
          static_cast<int64_t>(st.f_bavail) * static_cast<int64_t>(st.f_frsize)};
}

}  // namespace

boost::asio::awaitable<net::Response> handle_describe_log_dirs(HandlerContext& ctx) {
  auto req = ctx.decode<DescribeLogDirsRequest>();
  if (!authorized_cluster(ctx, acl::Operation::describe)) {
    DescribeLogDirsResponse refused;
    refused.error_code = protocol::code(protocol::ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(refused);
  }
  auto& svc = ctx.services;

  // Which partitions to report: all (null), or those named.
  std::map<std::string, std::set<int32_t>> wanted;
  if (req.topics) {
    for (const auto& t : *req.topics) wanted[t.topic].insert(t.partitions.begin(), t.partitions.end());
  }
  auto stats = co_await svc.partitions.partition_stats();

  // log dir -> topic -> partitions, in a stable order.
  std::map<std::string, std::map<std::string, std::vector<DescribeLogDirsResponse::DescribeLogDirsPartition>>> by_dir;
  for (const auto& dir : svc.partitions.log_dirs()) by_dir[dir_name(dir)];
  for (const auto& s : stats) {
    if (req.topics) {
      auto it = wanted.find(s.tp.topic);
      if (it == wanted.end() || !it->second.contains(s.tp.partition)) continue;
    }
    DescribeLogDirsResponse::DescribeLogDirsPartition p;
    p.partition_index = s.tp.partition;
    p.partition_size = static_cast<int64_t>(s.size_bytes);
    p.offset_lag = 0;
    p.is_future_key = false;
    by_dir[dir_name(s.log_dir)][s.tp.topic].push_back(p);
    if (!s.future_log_dir.empty()) {
      p.partition_size = static_cast<int64_t>(s.future_size_bytes);
      p.offset_lag = s.future_offset_lag;
      p.is_future_key = true;
      by_dir[dir_name(s.future_log_dir)][s.tp.topic].push_back(p);
    }
  }

  std::map<std::string, Space> space;
  if (ctx.version >= 4) {
    auto dirs = svc.partitions.log_dirs();
    auto measure = [dirs] {
      std::map<std::string, Space> out;
      for (const auto& d : dirs) out[dir_name(d)] = space_of(d);
      return out;
    };
    space = co_await svc.blocking.run(std::move(measure));
  }

  DescribeLogDirsResponse resp;
  for (auto& [dir, topics] : by_dir) {
    DescribeLogDirsResponse::DescribeLogDirsResult r;
    r.log_dir = dir;
    for (auto& [name, parts] : topics) {
      std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.partition_index < b.partition_index; });
      DescribeLogDirsResponse::DescribeLogDirsTopic t;
      t.name = name;
      t.partitions = std::move(parts);
      r.topics.push_back(std::move(t));
    }
    if (ctx.version >= 4) {
      r.total_bytes = space[dir].total;
      r.usable_bytes = space[dir].usable;
    }
    resp.results.push_back(std::move(r));
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
