#include "brokerd/metadata/node_identity.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>

#include "brokerd/protocol/uuid.h"

namespace brokerd::metadata {
namespace fs = std::filesystem;
namespace {

std::map<std::string, std::string> read_properties(const fs::path& file) {
  std::map<std::string, std::string> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

}  // namespace

std::vector<fs::path> new_log_dirs(const std::vector<fs::path>& log_dirs) {
  std::vector<fs::path> out;
  for (const auto& dir : log_dirs)
    if (!fs::exists(dir / "meta.properties")) out.push_back(dir);
  return out;
}

std::string ensure_node_identity(const std::vector<fs::path>& log_dirs, int32_t node_id,
                                 const std::optional<std::string>& expected) {
  std::optional<std::string> cluster_id;
  for (const auto& dir : log_dirs) {
    auto file = dir / "meta.properties";
    if (!fs::exists(file)) continue;
    auto props = read_properties(file);
    if (props.contains("node.id") && props["node.id"] != std::to_string(node_id))
      throw std::runtime_error(fmt::format("{} belongs to node {}, not node.id {}", file.string(), props["node.id"], node_id));
    auto id = props["cluster.id"];
    if (id.empty()) throw std::runtime_error(fmt::format("{} has no cluster.id", file.string()));
    if (cluster_id && *cluster_id != id)
      throw std::runtime_error(fmt::format("{} belongs to cluster {}, other log dirs to {}", file.string(), id, *cluster_id));
    if (expected && *expected != id)
      throw std::runtime_error(fmt::format("{} belongs to cluster {}, but this node's cluster is {} (cluster.id, or "
                                           "derived from controller.quorum.voters)",
                                           file.string(), id, *expected));
    cluster_id = id;
  }
  if (!cluster_id) cluster_id = expected ? *expected : protocol::Uuid::random().to_string();
  for (const auto& dir : log_dirs) {
    fs::create_directories(dir);
    auto file = dir / "meta.properties";
    if (fs::exists(file)) continue;
    auto tmp = dir / "meta.properties.tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << "version=1\ncluster.id=" << *cluster_id << "\nnode.id=" << node_id << "\n";
      if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    }
    fs::rename(tmp, file);
  }
  return *cluster_id;
}

}  // namespace brokerd::metadata
