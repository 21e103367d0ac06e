// DualPipe's eight steps on one rank (dual_order.hpp).
#include "workloads/step/dual_order.hpp"

#include <deque>
#include <utility>

#include "sim/assert.hpp"

namespace hopsim::work::schedule_parts {
namespace {

// One rank's ops, appended step by step.
class DualRank {
 public:
  explicit DualRank(const DualChunks& c) : c_(c) {}

  void forward(int chunk) { ops_.push_back({OpWork::Forward, c_.stage[i(chunk)], next_f(chunk)}); }

  void backward(int chunk, bool zero_bubble) {
    const int mb = next_b(chunk);
    const int stage = c_.stage[i(chunk)];
    ops_.push_back({zero_bubble ? OpWork::BackwardInput : OpWork::Backward, stage, mb});
    if (zero_bubble) {
      deferred_.emplace_back(stage, mb);
    }
  }

  void weight() {
    HOPSIM_ASSERT(!deferred_.empty(), "a weight part with none deferred");
    const auto [stage, mb] = deferred_.front();
    deferred_.pop_front();
    ops_.push_back({OpWork::Weight, stage, mb});
  }

  void pair(int forward_chunk, int backward_chunk) {
    const int f = next_f(forward_chunk);
    const int b = next_b(backward_chunk);
    ops_.push_back({OpWork::Pair, c_.stage[i(forward_chunk)], f, c_.stage[i(backward_chunk)], b});
  }

  std::vector<PipeOp> take() {
    HOPSIM_ASSERT(deferred_.empty(), "{} weight parts left", deferred_.size());
    return std::move(ops_);
  }

 private:
  static std::size_t i(int chunk) { return static_cast<std::size_t>(chunk); }

  int next_f(int chunk) { return c_.first_micro_batch[i(chunk)] + f_[i(chunk)]++; }

  int next_b(int chunk) { return c_.first_micro_batch[i(chunk)] + b_[i(chunk)]++; }

  DualChunks c_;
  std::array<int, 2> f_{};  // forwards and backwards run so far, by chunk
  std::array<int, 2> b_{};
  std::deque<std::pair<int, int>> deferred_;  // weight parts: (stage, micro-batch)
  std::vector<PipeOp> ops_;
};

// Steps 6 to 8: the last backwards, the second half of them zero-bubble, and the weight parts.
void cool_down(DualRank& o, int half, int place) {
  bool zero_bubble = false;
  const int steps6 = place + 1;
  for (int k = 0; k < steps6; ++k) {  // 6: nB1B0
    if (k == steps6 / 2 && place % 2 == 1) {
      zero_bubble = true;
    }
    o.backward(1, zero_bubble);
    if (k == steps6 / 2 && place % 2 == 0) {
      zero_bubble = true;
    }
    o.backward(0, zero_bubble);
  }
  for (int k = 0; k < half - place - 1; ++k) {  // 7: nWB0
    o.weight();
    o.backward(0, true);
  }
  for (int k = 0; k < place + 1; ++k) {  // 8: nW
    o.weight();
  }
}

}  // namespace

std::vector<PipeOp> dual_rank_order(int half, int place, int per_chunk, const DualChunks& c) {
  DualRank o(c);
  const bool middle = place == half - 1;
  for (int k = 0; k < (half - place - 1) * 2; ++k) {  // 1: nF0
    o.forward(0);
  }
  for (int k = 0; k < place + 1; ++k) {  // 2: nF0F1
    o.forward(0);
    o.forward(1);
  }
  for (int k = 0; k < half - place - 1; ++k) {  // 3: nB1W1F1
    o.backward(1, true);
    o.weight();
    o.forward(1);
  }
  const int main_steps = per_chunk - 2 * half + place + 1;
  for (int k = 0; k < main_steps; ++k) {  // 4: nF0B1F1B0
    if (k == 0 && middle) {               // not overlapped, to shrink the bubble
      o.forward(0);
      o.backward(1, false);
    } else {
      o.pair(0, 1);
    }
    o.pair(1, 0);
  }
  for (int k = 0; k < half - place - 1; ++k) {  // 5: nB1F1B0
    o.backward(1, false);
    o.pair(1, 0);
  }
  cool_down(o, half, place);
  return o.take();
}

}  // namespace hopsim::work::schedule_parts
