#include "brokerd/transactions/states.h"

#include <gtest/gtest.h>

namespace brokerd::transactions {
namespace {

using S = TxnState;

TEST(TxnStates, IdsAndNamesAreKafkas) {
  const std::pair<S, const char*> table[] = {
      {S::empty, "Empty"},
      {S::ongoing, "Ongoing"},
      {S::prepare_commit, "PrepareCommit"},
      {S::prepare_abort, "PrepareAbort"},
      {S::complete_commit, "CompleteCommit"},
      {S::complete_abort, "CompleteAbort"},
      {S::dead, "Dead"},
      {S::prepare_epoch_fence, "PrepareEpochFence"},
  };
  for (int8_t id = 0; id < 8; ++id) {
    EXPECT_EQ(static_cast<int8_t>(table[id].first), id);
    EXPECT_EQ(state_name(table[id].first), table[id].second);
    EXPECT_EQ(state_from_id(id), table[id].first);
    EXPECT_EQ(state_from_name(table[id].second), table[id].first);
  }
  EXPECT_FALSE(state_from_id(8));
  EXPECT_FALSE(state_from_id(-1));
  EXPECT_FALSE(state_from_name("Stable"));
}

TEST(TxnStates, ValidPreviousStatesFollowKafkasTable) {
  EXPECT_TRUE(can_transition(S::empty, S::empty));
  EXPECT_TRUE(can_transition(S::complete_commit, S::empty));
  EXPECT_TRUE(can_transition(S::complete_abort, S::empty));
  EXPECT_FALSE(can_transition(S::ongoing, S::empty));

  EXPECT_TRUE(can_transition(S::ongoing, S::ongoing));
  EXPECT_TRUE(can_transition(S::empty, S::ongoing));
  EXPECT_FALSE(can_transition(S::prepare_commit, S::ongoing));

  EXPECT_TRUE(can_transition(S::ongoing, S::prepare_commit));
  EXPECT_FALSE(can_transition(S::empty, S::prepare_commit));
  EXPECT_TRUE(can_transition(S::ongoing, S::prepare_abort));
  EXPECT_TRUE(can_transition(S::prepare_epoch_fence, S::prepare_abort));
  EXPECT_FALSE(can_transition(S::prepare_epoch_fence, S::prepare_commit));

  EXPECT_TRUE(can_transition(S::prepare_commit, S::complete_commit));
  EXPECT_FALSE(can_transition(S::prepare_abort, S::complete_commit));
  EXPECT_TRUE(can_transition(S::prepare_abort, S::complete_abort));

  EXPECT_TRUE(can_transition(S::empty, S::dead));
  EXPECT_TRUE(can_transition(S::complete_commit, S::dead));
  EXPECT_FALSE(can_transition(S::ongoing, S::dead));

  EXPECT_TRUE(can_transition(S::ongoing, S::prepare_epoch_fence));
  // Nothing leaves Dead.
  for (int8_t id = 0; id < 8; ++id) EXPECT_FALSE(can_transition(S::dead, static_cast<S>(id)));
}

TEST(TxnStates, OnlyIdleStatesExpire) {
  EXPECT_TRUE(expiration_allowed(S::empty));
  EXPECT_TRUE(expiration_allowed(S::complete_commit));
  EXPECT_TRUE(expiration_allowed(S::complete_abort));
  EXPECT_FALSE(expiration_allowed(S::ongoing));
  EXPECT_FALSE(expiration_allowed(S::prepare_commit));
  EXPECT_FALSE(expiration_allowed(S::dead));
}

}  // namespace
}  // namespace brokerd::transactions
