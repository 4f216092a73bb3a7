#pragma once
// The state machine of a transactional id: which state may follow which (Kafka's table of
// valid previous states), and the properties the coordinator asks of a state.
#include <optional>
#include <span>
#include <string_view>

#include "brokerd/transactions/types.h"

namespace brokerd::transactions {

// Kafka's name of a state ("PrepareCommit"), as DescribeTransactions reports it.
std::string_view state_name(TxnState s);
std::optional<TxnState> state_from_id(int8_t id);
std::optional<TxnState> state_from_name(std::string_view name);

// The states a transition into `to` may start from.
std::span<const TxnState> valid_previous_states(TxnState to);
bool can_transition(TxnState from, TxnState to);

// Only an id with no transaction under way may expire (Empty, CompleteCommit, CompleteAbort).
bool expiration_allowed(TxnState s);
// A transaction is open: its partitions may hold records not yet committed or aborted.
bool has_pending_transaction(TxnState s);
bool is_prepare(TxnState s);
bool is_complete(TxnState s);

}  // namespace brokerd::transactions
