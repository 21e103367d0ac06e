// Table spellings of the harness vocabulary, and their strict parsers.
#include "calibrate/core/types.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace hopsim::calib {
namespace {

template <typename E, std::size_t N>
E parse_enum(std::string_view s, const std::array<std::pair<E, std::string_view>, N>& names,
             std::string_view what) {
  for (const auto& [value, name] : names) {
    if (name == s) {
      return value;
    }
  }
  std::string expected;
  for (const auto& [value, name] : names) {
    expected += expected.empty() ? "" : "|";
    expected += name;
  }
  throw CalibError(fmt::format("unknown {} \"{}\" (expected {})", what, s, expected));
}

template <typename E, std::size_t N>
std::string_view enum_name(E e, const std::array<std::pair<E, std::string_view>, N>& names) {
  for (const auto& [value, name] : names) {
    if (value == e) {
      return name;
    }
  }
  return "?";
}

constexpr std::array<std::pair<Op, std::string_view>, 4> kOps{{{Op::Gemm, "gemm"},
                                                               {Op::GroupedGemm, "grouped_gemm"},
                                                               {Op::Attn, "attn"},
                                                               {Op::Memory, "memory"}}};
constexpr std::array<std::pair<Pass, std::string_view>, 2> kPasses{
    {{Pass::Fwd, "fwd"}, {Pass::Bwd, "bwd"}}};
constexpr std::array<std::pair<Dtype, std::string_view>, 2> kDtypes{
    {{Dtype::Bf16, "bf16"}, {Dtype::Fp8, "fp8"}}};
constexpr std::array<std::pair<Mask, std::string_view>, 3> kMasks{
    {{Mask::None, "none"},
     {Mask::CausalTopLeft, "causal_top_left"},
     {Mask::CausalBottomRight, "causal_bottom_right"}}};
constexpr std::array<std::pair<Suite, std::string_view>, 5> kSuites{{{Suite::All, "all"},
                                                                     {Suite::Gemm, "gemm"},
                                                                     {Suite::Experts, "experts"},
                                                                     {Suite::Attn, "attn"},
                                                                     {Suite::Memory, "memory"}}};

}  // namespace

std::size_t elem_bytes(Elem e) {
  switch (e) {
    case Elem::Bf16:
      return 2;
    case Elem::Fp8E4m3:
      return 1;
    case Elem::F32:
    case Elem::I32:
      return 4;
  }
  return 1;
}

std::string_view to_string(Op op) {
  return enum_name(op, kOps);
}

std::string_view to_string(Pass pass) {
  return enum_name(pass, kPasses);
}

std::string_view to_string(Dtype dtype) {
  return enum_name(dtype, kDtypes);
}

std::string_view to_string(Mask mask) {
  return enum_name(mask, kMasks);
}

std::string_view to_string(Suite suite) {
  return enum_name(suite, kSuites);
}

Op parse_op(std::string_view s) {
  return parse_enum(s, kOps, "op");
}

Pass parse_pass(std::string_view s) {
  return parse_enum(s, kPasses, "pass");
}

Dtype parse_dtype(std::string_view s) {
  return parse_enum(s, kDtypes, "dtype");
}

Mask parse_mask(std::string_view s) {
  return parse_enum(s, kMasks, "mask");
}

Suite parse_suite(std::string_view s) {
  return parse_enum(s, kSuites, "suite");
}

std::string_view flops_formula(Op op, Pass pass) {
  switch (op) {
    case Op::Gemm:
      return "gemm_v1";
    case Op::GroupedGemm:
      return "grouped_gemm_v1";
    case Op::Attn:
      return pass == Pass::Fwd ? "attn_fwd_v1" : "attn_bwd_v1";
    case Op::Memory:
      return "bytes_v1";
  }
  return "?";
}

bool suite_includes(Suite suite, Op op) {
  switch (suite) {
    case Suite::All:
      return true;
    case Suite::Gemm:
      return op == Op::Gemm;
    case Suite::Experts:
      return op == Op::GroupedGemm;
    case Suite::Attn:
      return op == Op::Attn;
    case Suite::Memory:
      return op == Op::Memory;
  }
  return false;
}

const std::string& key_string(const KeyMap& key, const std::string& name) {
  const auto it = key.find(name);
  if (it == key.end() || !std::holds_alternative<std::string>(it->second)) {
    throw CalibError(fmt::format("key \"{}\" must be a string", name));
  }
  return std::get<std::string>(it->second);
}

std::int64_t key_int(const KeyMap& key, const std::string& name) {
  const auto it = key.find(name);
  if (it == key.end() || !std::holds_alternative<std::int64_t>(it->second)) {
    throw CalibError(fmt::format("key \"{}\" must be an integer", name));
  }
  return std::get<std::int64_t>(it->second);
}

std::string key_to_string(const KeyMap& key) {
  std::string out;
  for (const auto& [name, value] : key) {
    out += out.empty() ? "" : " ";
    if (const auto* s = std::get_if<std::string>(&value)) {
      out += fmt::format("{}={}", name, *s);
    } else {
      out += fmt::format("{}={}", name, std::get<std::int64_t>(value));
    }
  }
  return out;
}

}  // namespace hopsim::calib
