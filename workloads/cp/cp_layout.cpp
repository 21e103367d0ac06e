// Chunks per ring position, attended pairs in closed form, and the kernel calls of a step.
#include "workloads/cp/cp_layout.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "sim/assert.hpp"

namespace hopsim::work {
namespace {

TokenRange intersect(TokenRange a, TokenRange b) {
  return {std::max(a.begin, b.begin), std::min(a.end, b.end)};
}

// Pairs (q, k), q in [a, b), k in [lo, hi), k <= q.
std::int64_t causal_pairs(std::int64_t a, std::int64_t b, std::int64_t lo, std::int64_t hi) {
  if (a >= b || lo >= hi) {
    return 0;
  }
  std::int64_t total = 0;
  const std::int64_t x = std::max(a, lo);
  const std::int64_t y = std::min(b, hi);
  if (x < y) {  // queries inside the key range: q - lo + 1 keys each
    const std::int64_t n = y - x;
    total += n * (x - lo + 1) + n * (n - 1) / 2;
  }
  const std::int64_t past = std::max(a, hi);
  if (past < b) {  // queries past the key range: all of it
    total += (b - past) * (hi - lo);
  }
  return total;
}

}  // namespace

std::string_view balance_name(CpBalance b) {
  return b == CpBalance::Zigzag ? "zigzag" : "contiguous";
}

bool zigzag_splits(CpBalance balance, std::int64_t ring) {
  return balance == CpBalance::Zigzag && ring > 1;
}

std::string_view attention_mask_name(AttentionMask m) {
  switch (m) {
    case AttentionMask::Causal:
      return "causal";
    case AttentionMask::Full:
      return "full";
    case AttentionMask::Document:
      return "document";
  }
  return "causal";
}

CpLayout::CpLayout(std::int64_t seq_len, int ring, CpBalance balance, AttentionMask mask,
                   std::vector<std::int64_t> documents, std::int64_t cached_tokens)
    : seq_len_(seq_len),
      ring_(ring),
      zigzag_(zigzag_splits(balance, ring)),
      chunk_(zigzag_ ? seq_len / (2 * ring) : seq_len / ring),
      mask_(mask),
      cached_(cached_tokens) {
  HOPSIM_ASSERT(ring >= 1 && chunk_ >= 1 && chunk_ * (zigzag_ ? 2 : 1) * ring == seq_len,
                "{} tokens do not split into the chunks of {} ring positions", seq_len, ring);
  HOPSIM_ASSERT(cached_tokens % ring == 0, "{} cached tokens over {} positions", cached_tokens,
                ring);
  if (mask == AttentionMask::Document) {
    std::int64_t at = 0;
    for (std::int64_t len : documents) {
      HOPSIM_ASSERT(len >= 1, "a document of {} tokens", len);
      documents_.push_back({at, at + len});
      at += len;
    }
    HOPSIM_ASSERT(at == seq_len, "documents sum to {} tokens, not {}", at, seq_len);
  } else {
    documents_.push_back({0, seq_len});
  }
  chunks_.resize(static_cast<std::size_t>(ring));
  for (int p = 0; p < ring; ++p) {
    auto& mine = chunks_[static_cast<std::size_t>(p)];
    mine.push_back({p * chunk_, (p + 1) * chunk_});
    if (zigzag_) {
      const std::int64_t mirror = 2 * ring - 1 - p;
      mine.push_back({mirror * chunk_, (mirror + 1) * chunk_});
    }
  }
}

std::span<const TokenRange> CpLayout::chunks(int position) const {
  return chunks_[static_cast<std::size_t>(position)];
}

std::int64_t CpLayout::pairs(TokenRange q, TokenRange k) const {
  if (mask_ == AttentionMask::Full) {
    return std::max<std::int64_t>(0, q.size()) * std::max<std::int64_t>(0, k.size());
  }
  // The documents that overlap q: from the last one starting at or before q.begin.
  auto first = std::upper_bound(documents_.begin(), documents_.end(), q.begin,
                                [](std::int64_t at, const TokenRange& d) { return at < d.begin; });
  if (first != documents_.begin()) {
    --first;
  }
  std::int64_t total = 0;
  for (auto d = first; d != documents_.end() && d->begin < q.end; ++d) {
    const TokenRange qd = intersect(q, *d);
    const TokenRange kd = intersect(k, *d);
    total += causal_pairs(qd.begin, qd.end, kd.begin, kd.end);
  }
  return total;
}

void CpLayout::add_calls(TokenRange q, std::span<const TokenRange> keys, std::int64_t cached,
                         std::vector<AttentionCall>& out) const {
  std::int64_t full = cached;  // every new query attends every cached key
  std::int64_t partial = 0;
  for (const TokenRange& k : keys) {
    const std::int64_t e = pairs(q, k);
    if (e == 0) {
      continue;
    }
    if (e == q.size() * k.size()) {
      full += k.size();
    } else if (q.begin == k.begin && q.end == k.end && e == q.size() * (q.size() + 1) / 2) {
      out.push_back({q.size(), q.size(), Mask::CausalTopLeft, e});
    } else {
      partial += e;
    }
  }
  if (full > 0) {
    out.push_back({q.size(), full, Mask::None, q.size() * full});
  }
  if (partial > 0) {
    out.push_back({q.size(), (partial + q.size() - 1) / q.size(), Mask::None, partial});
  }
}

std::vector<AttentionCall> CpLayout::calls(int q, int kv) const {
  std::vector<AttentionCall> out;
  for (const TokenRange& qc : chunks(q)) {
    add_calls(qc, chunks(kv), cached_per_position(), out);
  }
  return out;
}

std::vector<AttentionCall> CpLayout::calls_all_keys(int q) const {
  std::vector<TokenRange> keys;
  for (const auto& mine : chunks_) {
    keys.insert(keys.end(), mine.begin(), mine.end());
  }
  std::vector<AttentionCall> out;
  for (const TokenRange& qc : chunks(q)) {
    add_calls(qc, keys, cached_, out);
  }
  return out;
}

std::int64_t CpLayout::pairs(int q, int kv) const {
  std::int64_t total = 0;
  for (const AttentionCall& c : calls(q, kv)) {
    total += c.pairs;
  }
  return total;
}

int CpLayout::units(int q, int kv) const {
  int n = 0;
  for (const TokenRange& qc : chunks(q)) {
    for (const TokenRange& kc : chunks(kv)) {
      n += pairs(qc, kc) > 0 ? 1 : 0;
    }
  }
  return n;
}

std::vector<std::int64_t> draw_documents(std::int64_t seq_len, std::int64_t mean_tokens,
                                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);  // the standard fixes its output sequence
  std::vector<std::int64_t> lengths;
  std::int64_t left = seq_len;
  while (left > 0) {
    const double u = static_cast<double>(rng() >> 11U) * 0x1p-53;  // [0, 1)
    const auto len = std::max<std::int64_t>(
        1, std::llround(-static_cast<double>(mean_tokens) * std::log1p(-u)));
    lengths.push_back(std::min(len, left));
    left -= lengths.back();
  }
  return lengths;
}

}  // namespace hopsim::work
