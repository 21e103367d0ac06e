// Tests of the linear-time matcher of kernel rules (RE2): the same answers as std::regex_search
// on the patterns rules use, no time blow-up on patterns that make a backtracking matcher take
// minutes, and each refused construct named.
#include "tools/profile/linear_regex.hpp"

#include <chrono>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace hopsim::profile {
namespace {

std::string error_of(const std::string& pattern) {
  try {
    (void)LinearRegex(pattern);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("linear_regex: the same answers as std::regex_search") {
  const std::vector<std::string> patterns = {"dpsk::ep::|deep_ep::",
                                             "^nccl(Dev)?Kernel",
                                             "^sm\\d+_xmma_gemm_.*_(tt|nn|tn|nt)_.*splitk",
                                             "CUDAFunctor_add<c10::BFloat16>",
                                             "reduce_kernel<\\d+, \\d+, at::native",
                                             "^void at::native::|^Memcpy",
                                             "a{2,3}b",
                                             "a{2}$",
                                             "x{0,}y",
                                             "[^a-c]z",
                                             "[a-c-]+!",
                                             "\\bgemm\\b",
                                             "\\Bemm",
                                             "(?:ab|a)*c",
                                             "colou?r",
                                             "^$",
                                             "",
                                             "[\\d_]+x",
                                             "\\.cu$",
                                             "(a|b)+?c",
                                             "x.y",
                                             "\\W\\S\\D",
                                             "(a*)*b"};
  const std::vector<std::string> texts = {"",
                                          "ncclDevKernel_AllReduce",
                                          "ncclKernel",
                                          "xncclKernel",
                                          "sm90_xmma_gemm_bf16_tn_n_splitk",
                                          "sm80_xmma_gemm_x_nt_y",
                                          "void at::native::foo",
                                          "CUDAFunctor_add<c10::BFloat16>",
                                          "reduce_kernel<512, 1, at::native::ReduceOp",
                                          "aab",
                                          "aaab",
                                          "ab",
                                          "aa",
                                          "xxy",
                                          "y",
                                          "dz",
                                          "az",
                                          "ab-c!",
                                          "a gemm kernel",
                                          "gemm_x",
                                          "hemm",
                                          "ababc",
                                          "ac",
                                          "color",
                                          "colour",
                                          "12_x",
                                          "file.cu",
                                          "bbc",
                                          "]",
                                          "x\ny",
                                          "xzy",
                                          "! x",
                                          "aaaaaaaab",
                                          "dpsk::ep::dispatch"};
  for (const std::string& p : patterns) {
    const std::regex reference(p, std::regex::ECMAScript);
    const LinearRegex linear(p);
    for (const std::string& t : texts) {
      CAPTURE(p);
      CAPTURE(t);
      CHECK(linear.search(t) == std::regex_search(t, reference));
    }
  }
}

TEST_CASE("linear_regex: nested quantifiers take time linear in the name") {
  // std::regex backtracks through every way to split the name among the groups: minutes.
  const LinearRegex nested("^(\\w+:*)*Kernel$");
  const std::string name(2048, 'a');
  const auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(nested.search(name));
  CHECK(nested.search("ncclDev::Kernel"));
  CHECK_FALSE(LinearRegex("(a|a)*(a|aa)*b").search(name));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 1.0);
}

TEST_CASE("linear_regex: what needs backtracking or is malformed is refused, saying what") {
  CHECK(error_of("(a)\\1") == "invalid escape sequence: \\1");
  CHECK(error_of("a(?=b)") == "invalid perl operator: (?=");
  CHECK(error_of("x(") == "missing ): x(");
  CHECK(error_of("x)") == "unexpected ): x)");
  CHECK(error_of("*a") == "no argument for repetition operator: *");
  CHECK(error_of("a**") == "bad repetition operator: **");
  CHECK(error_of("[a-") == "missing ]: [a-");
  CHECK(error_of("[z-a]") == "invalid character class range: z-a");
  CHECK(error_of("a{1001}") == "invalid repetition size: {1001}");
  CHECK(error_of("^(\\w+:*)*Kernel$").empty());
}

}  // namespace
}  // namespace hopsim::profile
