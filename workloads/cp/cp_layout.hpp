// Where the tokens of a sequence live under context parallelism, and which (query, key) pairs
// each rank's attention must compute: the arithmetic of load balance, no plan, no time.
//
// A sequence of S new tokens (positions 0..S-1) is cut into chunks over r ring positions:
//   contiguous  r chunks of S/r tokens; position p holds chunk p
//   zigzag      2r chunks of k = S/(2r); position p holds chunks p and 2r-1-p (Megatron's
//               load balance for causal masks: every position gets 2r+1 chunk pairs of work);
//               over one position there is nothing to balance: one chunk, as contiguous
// An optional cache of T tokens (already computed context, prefill with a KV cache) precedes
// the new tokens; every new query attends every cached key, and position p holds T/r of them.
// Masks: causal (key <= query), full, or document (causal inside each packed document, nothing
// across documents).
//
// Attended pairs of a query interval Q and a key interval K inside a document D (causal):
//   sum over q in Q∩D of |{k in K∩D : k <= q}|, in closed form per document.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "workloads/compute/compute_model.hpp"

namespace hopsim::work {

enum class CpBalance : std::uint8_t { Contiguous, Zigzag };
enum class AttentionMask : std::uint8_t { Causal, Full, Document };

/// "contiguous", "zigzag"; "causal", "full", "document".
std::string_view balance_name(CpBalance b);
/// Whether `balance` cuts 2r chunks over r ring positions: zigzag over two or more (over one
/// there is nothing to balance, and the sequence is one chunk).
bool zigzag_splits(CpBalance balance, std::int64_t ring);
std::string_view attention_mask_name(AttentionMask m);

/// Token positions [begin, end).
struct TokenRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
};

/// One attention kernel call of a step: shape and mask, and the pairs it really attends (a
/// document mask's partial block is priced as a full block of the same pairs: s_kv = E / s_q).
struct AttentionCall {
  std::int64_t s_q = 0;
  std::int64_t s_kv = 0;
  Mask mask = Mask::None;
  std::int64_t pairs = 0;
};

class CpLayout {
 public:
  /// `documents`: lengths summing to seq_len (mask Document only). The caller has checked that
  /// seq_len splits into the chunks and cached_tokens into ring positions.
  CpLayout(std::int64_t seq_len, int ring, CpBalance balance, AttentionMask mask,
           std::vector<std::int64_t> documents = {}, std::int64_t cached_tokens = 0);

  int ring() const { return ring_; }
  /// Tokens of one chunk (k).
  std::int64_t chunk_tokens() const { return chunk_; }
  /// New tokens one position holds: S / r.
  std::int64_t tokens_per_position() const { return seq_len_ / ring_; }
  /// Cached tokens one position holds: T / r.
  std::int64_t cached_per_position() const { return cached_ / ring_; }
  std::span<const TokenRange> chunks(int position) const;

  /// Attended (query, key) pairs of position q's new queries against position kv's keys
  /// (its cached keys and its new ones).
  std::int64_t pairs(int q, int kv) const;
  /// Chunk pairs (query chunk of q, key chunk of kv) with at least one attended pair, the
  /// seeds' unit of work (a diagonal chunk pair counts as one); cached keys are not counted.
  int units(int q, int kv) const;
  /// The kernel calls that compute q's queries against kv's keys: per query chunk, one over the
  /// keys it attends fully (cache included), one causal diagonal, one for partial blocks.
  std::vector<AttentionCall> calls(int q, int kv) const;
  /// The calls of q's queries against every key (all-gather CP, one pass over all keys).
  std::vector<AttentionCall> calls_all_keys(int q) const;

  /// Attended pairs of a query range against a key range (new tokens only).
  std::int64_t pairs(TokenRange q, TokenRange k) const;

 private:
  std::int64_t seq_len_;
  int ring_;
  bool zigzag_;  // zigzag_splits(balance, ring)
  std::int64_t chunk_;
  AttentionMask mask_;
  std::vector<TokenRange> documents_;  // one covering everything unless mask Document
  std::int64_t cached_;
  std::vector<std::vector<TokenRange>> chunks_;  // per position

  void add_calls(TokenRange q, std::span<const TokenRange> keys, std::int64_t cached,
                 std::vector<AttentionCall>& out) const;
};

/// Document lengths drawn from an exponential distribution of mean `mean_tokens` (each at least
/// 1), seeded, the last cut so that they sum to `seq_len`. Portable: same lengths everywhere.
std::vector<std::int64_t> draw_documents(std::int64_t seq_len, std::int64_t mean_tokens,
                                         std::uint64_t seed);

}  // namespace hopsim::work
