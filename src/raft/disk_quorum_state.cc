#include "brokerd/raft/disk_quorum_state.h"

#include <charconv>
#include <stdexcept>

#include "brokerd/raft/disk_io.h"

namespace brokerd::raft {

namespace {

// The file is only ever written by encode() below, so the reader looks for the known keys
// instead of carrying a general JSON parser; an unexpected shape is refused.
std::optional<int64_t> int_field(const std::string& text, std::string_view key, size_t from = 0,
                                 size_t* end = nullptr) {
  std::string needle = "\"" + std::string(key) + "\":";
  size_t at = text.find(needle, from);
  if (at == std::string::npos) return std::nullopt;
  at += needle.size();
  while (at < text.size() && text[at] == ' ') ++at;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data() + at, text.data() + text.size(), v);
  if (ec != std::errc()) return std::nullopt;
  if (end) *end = static_cast<size_t>(p - text.data());
  return v;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) >= 0x20) out.push_back(c);
  }
  return out;
}

}  // namespace

DiskQuorumStateStore::DiskQuorumStateStore(std::filesystem::path dir, std::vector<ReplicaId> voters,
                                           std::string cluster_id)
    : path_(dir / kFileName), voters_(std::move(voters)), cluster_id_(std::move(cluster_id)) {
  std::filesystem::create_directories(dir);
}

std::optional<QuorumStateData> DiskQuorumStateStore::read() const {
  auto text = read_whole_file(path_);
  if (!text) return std::nullopt;
  auto version = int_field(*text, "data_version");
  auto leader = int_field(*text, "leaderId");
  auto epoch = int_field(*text, "leaderEpoch");
  auto voted = int_field(*text, "votedId");
  if (!version || *version != 0 || !leader || !epoch || !voted)
    throw std::runtime_error("unreadable quorum state file " + path_.string());
  QuorumStateData s;
  s.epoch = static_cast<Epoch>(*epoch);
  s.leader_id = static_cast<ReplicaId>(*leader);
  s.voted_for = static_cast<ReplicaId>(*voted);
  return s;
}

std::vector<ReplicaId> DiskQuorumStateStore::recorded_voters() const {
  std::vector<ReplicaId> out;
  auto text = read_whole_file(path_);
  if (!text) return out;
  size_t at = 0;
  while (auto v = int_field(*text, "voterId", at, &at)) out.push_back(static_cast<ReplicaId>(*v));
  return out;
}

void DiskQuorumStateStore::write(const QuorumStateData& s) {
  // QuorumStateData version 0, with the field names Kafka's quorum-state file uses.
  std::string text = "{\"clusterId\":\"" + json_escape(cluster_id_) + "\"";
  text += ",\"leaderId\":" + std::to_string(s.leader_id);
  text += ",\"leaderEpoch\":" + std::to_string(s.epoch);
  text += ",\"votedId\":" + std::to_string(s.voted_for);
  text += ",\"appliedOffset\":0,\"currentVoters\":[";
  for (size_t i = 0; i < voters_.size(); ++i) {
    if (i) text += ",";
    text += "{\"voterId\":" + std::to_string(voters_[i]) + "}";
  }
  text += "],\"data_version\":0}\n";
  write_file_durably(path_, text);
}

}  // namespace brokerd::raft
