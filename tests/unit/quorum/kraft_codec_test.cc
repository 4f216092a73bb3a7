// The KRaft RPCs through the generated codecs: every request and response body survives
// encode and decode; entries keep offsets, epochs and the control flag; malformed input is a
// DecodeError.
#include "brokerd/quorum/kraft_codec.h"

#include <gtest/gtest.h>

#include "brokerd/protocol/wire.h"

namespace brokerd::quorum {
namespace {

using namespace brokerd::raft;

// Encodes a request as a peer would and decodes it as the receiving node does.
MessageBody request_round_trip(const MessageBody& body) {
  WireRequest w = encode_request(body, "cluster-x");
  return decode_request(w.api_key, w.version, w.body, 77);
}

MessageBody response_round_trip(const MessageBody& request, const MessageBody& response) {
  WireRequest w = encode_request(request, "c");
  Bytes bytes = encode_response(w.api_key, w.version, response);
  return decode_response(w.api_key, w.version, bytes, request);
}

TEST(KraftCodec, VoteRoundTrips) {
  VoteRequest v{7, 2, 3, 6, 120, true};
  auto back = std::get<VoteRequest>(request_round_trip(v));
  EXPECT_EQ(back.candidate_epoch, 7);
  EXPECT_EQ(back.candidate_id, 2);
  EXPECT_EQ(back.voter_id, 3);
  EXPECT_EQ(back.last_offset_epoch, 6);
  EXPECT_EQ(back.last_offset, 120);
  EXPECT_TRUE(back.pre_vote);
  VoteResponse r{Errc::fenced_leader_epoch, 4, 9, true, true};
  auto rb = std::get<VoteResponse>(response_round_trip(v, r));
  EXPECT_EQ(rb.error, Errc::fenced_leader_epoch);
  EXPECT_EQ(rb.leader_id, 4);
  EXPECT_EQ(rb.leader_epoch, 9);
  EXPECT_TRUE(rb.vote_granted);
  EXPECT_TRUE(rb.pre_vote);
}

TEST(KraftCodec, QuorumEpochMessagesRoundTrip) {
  BeginQuorumEpochRequest b{3, 1, 12};
  auto bb = std::get<BeginQuorumEpochRequest>(request_round_trip(b));
  EXPECT_EQ(bb.voter_id, 3);
  EXPECT_EQ(bb.leader_id, 1);
  EXPECT_EQ(bb.leader_epoch, 12);
  auto br = std::get<BeginQuorumEpochResponse>(response_round_trip(b, BeginQuorumEpochResponse{Errc::none, 1, 12}));
  EXPECT_EQ(br.leader_epoch, 12);

  EndQuorumEpochRequest e{1, 12, {3, 2}};
  auto eb = std::get<EndQuorumEpochRequest>(request_round_trip(e));
  EXPECT_EQ(eb.leader_id, 1);
  EXPECT_EQ(eb.leader_epoch, 12);
  EXPECT_EQ(eb.preferred_candidates, (std::vector<ReplicaId>{3, 2}));
  auto er = std::get<EndQuorumEpochResponse>(
      response_round_trip(e, EndQuorumEpochResponse{Errc::not_leader_or_follower, 2, 13}));
  EXPECT_EQ(er.error, Errc::not_leader_or_follower);
  EXPECT_EQ(er.leader_id, 2);
}

TEST(KraftCodec, FetchCarriesEntriesDivergenceAndSnapshots) {
  FetchRequest f{5, 8, 100, 7, 32};
  auto fb = std::get<FetchRequest>(request_round_trip(f));
  EXPECT_EQ(fb.replica_id, 5);
  EXPECT_EQ(fb.current_leader_epoch, 8);
  EXPECT_EQ(fb.fetch_offset, 100);
  EXPECT_EQ(fb.last_fetched_epoch, 7);
  EXPECT_EQ(fb.max_entries, 77);  // the receiving node's own bound

  FetchResponse r;
  r.leader_id = 1;
  r.leader_epoch = 8;
  r.high_watermark = 103;
  r.log_start_offset = 10;
  r.entries = {{100, 7, false, "a"}, {101, 8, true, std::string("\0ctl", 4)}, {102, 8, false, ""},
               {103, 8, false, std::string(5000, 'x')}};
  auto rb = std::get<FetchResponse>(response_round_trip(f, r));
  EXPECT_EQ(rb.entries, r.entries);
  EXPECT_EQ(rb.high_watermark, 103);
  EXPECT_EQ(rb.log_start_offset, 10);
  EXPECT_EQ(rb.leader_id, 1);
  EXPECT_FALSE(rb.diverging_epoch);
  EXPECT_FALSE(rb.snapshot_id);

  FetchResponse d;
  d.diverging_epoch = OffsetAndEpoch{90, 6};
  d.snapshot_id = OffsetAndEpoch{50, 3};
  auto db = std::get<FetchResponse>(response_round_trip(f, d));
  ASSERT_TRUE(db.diverging_epoch);
  EXPECT_EQ(*db.diverging_epoch, (OffsetAndEpoch{90, 6}));
  ASSERT_TRUE(db.snapshot_id);
  EXPECT_EQ(*db.snapshot_id, (OffsetAndEpoch{50, 3}));
  EXPECT_TRUE(db.entries.empty());
}

TEST(KraftCodec, FetchSnapshotRoundTrips) {
  FetchSnapshotRequest f{4, 9, {500, 8}, 4096, 1 << 20};
  auto fb = std::get<FetchSnapshotRequest>(request_round_trip(f));
  EXPECT_EQ(fb.replica_id, 4);
  EXPECT_EQ(fb.snapshot_id, (OffsetAndEpoch{500, 8}));
  EXPECT_EQ(fb.position, 4096);
  EXPECT_EQ(fb.max_bytes, 1 << 20);
  FetchSnapshotResponse r{Errc::none, 1, 9, {500, 8}, 9000, 4096, std::string("\x01\x02\x00\x03", 4)};
  auto rb = std::get<FetchSnapshotResponse>(response_round_trip(f, r));
  EXPECT_EQ(rb.bytes, r.bytes);
  EXPECT_EQ(rb.size, 9000);
  EXPECT_EQ(rb.position, 4096);
  EXPECT_EQ(rb.snapshot_id, (OffsetAndEpoch{500, 8}));
}

TEST(KraftCodec, MalformedInputIsADecodeError) {
  WireRequest w = encode_request(VoteRequest{1, 1, 2, 0, 0, false}, "c");
  Bytes cut(w.body.begin(), w.body.begin() + static_cast<ptrdiff_t>(w.body.size() / 2));
  EXPECT_THROW(decode_request(w.api_key, w.version, cut, 10), protocol::DecodeError);
  EXPECT_THROW(decode_request(w.api_key, 9, w.body, 10), protocol::DecodeError);  // unknown version
  EXPECT_THROW(decode_request(3, 0, w.body, 10), protocol::DecodeError);         // not a KRaft API
  Bytes batches = entries_to_batches({{0, 1, false, "x"}, {1, 1, false, "y"}});
  batches[30] ^= std::byte{0x40};  // inside the CRC-covered part
  EXPECT_THROW(batches_to_entries(batches), protocol::DecodeError);
}

}  // namespace
}  // namespace brokerd::quorum
