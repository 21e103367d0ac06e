// Tests of tools/profile: reading PyTorch profiler traces (plain and gzip, and each malformed
// input as one error naming the file and event), the shipped kernel rules on real kernel names,
// and the check's arithmetic (per GPU and step, merged rows, hopsim's split) against a summary
// built by hand.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/approx.hpp"
#include "tools/config/node.hpp"
#include "tools/profile/gzip_text.hpp"
#include "tools/profile/kernel_rules.hpp"
#include "tools/profile/kineto_trace.hpp"
#include "tools/profile/profile_check.hpp"
#include "tools/profile/trace_calibration.hpp"

namespace hopsim::profile {
namespace {

using nlohmann::json;
using test::approx;

json kernel(const std::string& name, double ts, double dur, int device = 0, int stream = 7) {
  return {{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", device}, {"tid", stream},
          {"ts", ts},  {"dur", dur},      {"args", {{"device", device}, {"stream", stream}}}};
}

json step_annotation(int n, double ts) {
  return {{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(n)},
          {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", 100}};
}

// The error parse_kineto_trace gives for `text`, or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    (void)parse_kineto_trace(text, "t.json");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

std::filesystem::path temp_file(const std::string& name, const std::string& bytes) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

TEST_CASE("profile.trace: kernels, steps, GPU and rank from a Kineto trace") {
  const json t = {{"schemaVersion", 1},
                  {"deviceProperties", {{{"id", 0}, {"name", "NVIDIA H800"}}}},
                  {"distributedInfo", {{"backend", "nccl"}, {"rank", 3}, {"world_size", 64}}},
                  {"traceEvents",
                   {step_annotation(1, 0), kernel("a", 10, 5), step_annotation(2, 200),
                    {{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"ts", 1}, {"dur", 1}},
                    {{"ph", "M"}, {"name", "process_name"}},
                    kernel("b", 20, 7.5, 1, 23)}}};
  const KinetoTrace k = parse_kineto_trace(t.dump(), "t.json");
  REQUIRE(k.kernels.size() == 2);
  CHECK(k.kernels[1].name == "b");
  CHECK(k.kernels[1].duration_us == 7.5);
  CHECK(k.kernels[1].device == 1);
  CHECK(k.kernels[1].stream == 23);
  CHECK(k.profiler_steps == 2);
  CHECK(k.gpu == "NVIDIA H800");
  CHECK(k.rank == 3);
  CHECK(k.world_size == 64);
  // Chrome's other form, a bare array of events; pid and tid stand in for args.
  const json bare = {{{"ph", "X"}, {"cat", "kernel"}, {"name", "c"}, {"pid", 2}, {"tid", 9},
                      {"ts", 0}, {"dur", 1}}};
  const KinetoTrace b = parse_kineto_trace(bare.dump(), "b.json");
  REQUIRE(b.kernels.size() == 1);
  CHECK(b.kernels[0].device == 2);
  CHECK(b.kernels[0].stream == 9);
  CHECK(b.profiler_steps == 0);
}

TEST_CASE("profile.gzip: a gzip trace reads as the plain one, a cut one is an error") {
  const json t = {{"traceEvents", {kernel("k", 0, 3), kernel("k", 5, 4)}}};
  const std::string text = t.dump();
  const auto plain = temp_file("hopsim-profile-plain.json", text);
  const auto packed = temp_file("hopsim-profile-packed.json.gz", gzip(text));
  CHECK(read_maybe_gzip(packed.string(), 1 << 20) == text);
  CHECK(read_kineto_trace(packed.string()).kernels.size() == 2);
  CHECK(read_kineto_trace(plain.string()).kernels.size() == 2);
  const std::string z = gzip(text);
  const auto cut = temp_file("hopsim-profile-cut.json.gz", z.substr(0, z.size() / 2));
  CHECK_THROWS_WITH_AS(read_kineto_trace(cut.string()),
                       (cut.string() + ": not a valid gzip file (truncated)").c_str(),
                       config::ConfigError);
  CHECK_THROWS_WITH_AS(read_maybe_gzip(plain.string(), 10),
                       doctest::Contains("bytes; at most 0 MiB are read"), config::ConfigError);
  const std::string inflated = std::string(4096, ' ') + text;
  const auto big = temp_file("hopsim-profile-big.json.gz", gzip(inflated));
  CHECK_THROWS_WITH_AS(read_maybe_gzip(big.string(), 2048),
                       doctest::Contains("inflates to more than"), config::ConfigError);
  for (const auto& p : {plain, packed, cut, big}) {
    std::filesystem::remove(p);
  }
}

TEST_CASE("profile.trace_errors: one message naming the file and the event") {
  CHECK(parse_error("{\"traceEvents\": [") .starts_with("t.json: invalid JSON at line 1"));
  CHECK(parse_error("{\"events\": []}") ==
        "t.json: not a PyTorch profiler trace (no \"traceEvents\" array)");
  CHECK(parse_error(json{{"traceEvents", json::array()}}.dump()) ==
        "t.json: no GPU kernels (events of category \"kernel\"); profile with "
        "ProfilerActivity.CUDA");
  json t = {{"traceEvents", {kernel("a", 0, 1), kernel("b", 0, 1)}}};
  t["traceEvents"][1].erase("dur");
  CHECK(parse_error(t.dump()) == "t.json: /traceEvents/1/dur: a kernel event needs \"dur\" as a "
                                 "number of microseconds, from 0 to 8.64e+10");
  t["traceEvents"][1]["dur"] = -2;
  CHECK(parse_error(t.dump()).starts_with("t.json: /traceEvents/1/dur:"));
  t["traceEvents"][1]["dur"] = 1e300;  // a kernel longer than a day: no measurement
  CHECK(parse_error(t.dump()) == "t.json: /traceEvents/1/dur: a kernel event needs \"dur\" as a "
                                 "number of microseconds, from 0 to 8.64e+10, got 1e+300");
  t["traceEvents"][1]["dur"] = 1;
  t["traceEvents"][1]["ts"] = 1e300;
  CHECK(parse_error(t.dump()).starts_with("t.json: /traceEvents/1/ts:"));
  t["traceEvents"][1]["ts"] = 0;
  t["traceEvents"][1]["dur"] = 2;
  t["traceEvents"][1]["name"] = 5;
  CHECK(parse_error(t.dump()) ==
        "t.json: /traceEvents/1/name: a kernel event needs its name as a string");
  t["traceEvents"][1] = 7;
  CHECK(parse_error(t.dump()) == "t.json: /traceEvents/1: an event that is not an object");
  t["traceEvents"][1] = {{"cat", "kernel"}, {"name", "x"}, {"dur", 1}};
  CHECK(parse_error(t.dump()).starts_with("t.json: /traceEvents/1/ts:"));
}

// The shipped rules' class for each real kernel name (joined with "+" where merged).
std::string class_of(const KernelRules& rules, const std::string& name) {
  const std::size_t i = rules.match(name);
  if (i == rules.size()) {
    return std::string(kUnclassified);
  }
  std::string out;
  for (const std::string& c : rules.rule(i).classes) {
    out += (out.empty() ? "" : "+") + c;
  }
  return out;
}

TEST_CASE("profile.rules: the shipped rules on real kernel names") {
  const KernelRules rules =
      KernelRules::read(std::string(HOPSIM_SOURCE_DIR) + "/configs/profile/kernel-classes.json");
  const std::vector<std::pair<std::string, std::string>> names{
      // DeepSeek's training profile (github.com/deepseek-ai/profile-data, train.json).
      {"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>"
       "(dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel::Params)",
       "grouped_gemm_fprop+grouped_gemm_dgrad"},
      {"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel>"
       "(dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel::Params)",
       "gemm_wgrad+grouped_gemm_wgrad"},
      {"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>"
       "(dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel::Params)",
       "gemm_fprop+gemm_dgrad"},
      {"void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*)", "deepep"},
      {"void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*)", "deepep"},
      {"void flash::compute_attn_ws<Flash_fwd_kernel_traits<192, 128, 128, 12, 2, false, 1, "
       "cutlass::bfloat16_t, 128>, true>(Flash_fwd_params)",
       "attention_fwd"},
      {"void cutlass::device_kernel<flash::FlashAttnBwd<flash::CollectiveMainloopBwd<2> > >()",
       "attention_bwd"},
      {"void cutlass::device_kernel<flash::FlashAttnBwdPreprocess<cute::tuple<cute::C<64> > > >()",
       "attention_bwd_prep"},
      {"void cuda::swiglu_forward_with_weight_and_per_token_cast_to_fp8_with_channels_impl<"
       "__nv_bfloat16, true, false, 128>(unsigned char*, __nv_bfloat16 const*)",
       "swiglu"},
      {"void cuda::per_token_cast_to_fp8_with_channels<__nv_bfloat16, 128, false, 128, false>("
       "__nv_bfloat16 const*, int, unsigned char*, float*, int, int, int, int, bool, float)",
       "fp8_cast"},
      {"void cuda::per_channel_cast_and_transpose<256, 128, false, false, false, false, false>("
       "void const*, float const*, int const*, int const*, unsigned char*)",
       "fp8_cast"},
      {"void layer_norm::ln_fwd_kernel<layer_norm::Kernel_traits<__nv_bfloat16, __nv_bfloat16, "
       "__nv_bfloat16, __nv_bfloat16, float, unsigned int, 7168u, 1u, 1u, 16u> >()",
       "norm"},
      {"rotary_kernel", "rotary"},
      {"void cuda::get_fused_mapping<512>(long const*, int*, int*, int*, int*, int*, int*)",
       "permute"},
      {"void cuda::topk_sum_and_topk_idx<16, 64>(float const*, long*, int, int, int, int, int)",
       "router"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<"
       "c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<"
       "c10::BFloat16>, at::detail::Array<char*, 3>)",
       "residual"},
      {"_copy_tensor_kernel", "copy"},
      {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::"
       "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
       "{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1}> >(int, ...)",
       "copy"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
       "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
       "at::detail::Array<char*, 1>)",
       "unmodelled"},
      // cuBLAS by layout (in the same profile), NCCL, FlashAttention 2, Apex's Adam.
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       "gemm_fprop"},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       "gemm_dgrad"},
      {"sm90_xmma_gemm_bf16f32_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       "gemm_wgrad"},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "nccl"},
      {"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "nccl"},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
       "cutlass::bfloat16_t> >(Flash_fwd_params)",
       "attention_fwd"},
      {"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128> >("
       "Flash_bwd_params)",
       "attention_bwd"},
      {"void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128> >(Flash_bwd_params)",
       "attention_bwd_prep"},
      {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float, float, int>, "
       "float, float, float, float, float, float, adamMode_t, float>(long, int volatile*)",
       "other"},
      {"my_custom_kernel<128>", "unclassified"},
  };
  for (const auto& [name, expected] : names) {
    INFO(name);
    CHECK(class_of(rules, name) == expected);
  }
}

TEST_CASE("profile.rules_long_name: a huge name is matched on its head, without a crash") {
  const KernelRules rules =
      KernelRules::read(std::string(HOPSIM_SOURCE_DIR) + "/configs/profile/kernel-classes.json");
  // The standard library's matcher recurses per character: 100,000 would overflow the stack.
  const std::string head = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_";
  CHECK(class_of(rules, head + std::string(100000, 'a')) == "gemm_fprop");
  // What lies past the first kMaxMatchedName characters is not seen.
  CHECK(class_of(rules, std::string(kMaxMatchedName, 'x') + "ncclDevKernel_AllReduce") ==
        "unclassified");
}

// The error KernelRules::read gives for a rules file with `rules`.
std::string rules_error(const json& rules) {
  const json file = {{"schema", "hopsim.kernel_rules/1"}, {"rules", rules}};
  const auto p = temp_file("hopsim-rules.json", file.dump());
  std::string out;
  try {
    (void)KernelRules::read(p.string());
  } catch (const config::ConfigError& e) {
    out = e.what();
  }
  std::filesystem::remove(p);
  const std::string prefix = p.string() + ": ";
  return out.starts_with(prefix) ? out.substr(prefix.size()) : out;
}

TEST_CASE("profile.rules_errors: each names the rule's key") {
  CHECK(rules_error({{{"class", "gemm"}, {"match", "x"}}}) ==
        "/rules/0/class: unknown class \"gemm\"; a kernel class (gemm_fprop, ..., other), nccl, "
        "deepep or unmodelled");
  CHECK(rules_error({{{"class", "norm"}, {"match", "x("}}}).starts_with(
      "/rules/0/match: not a regular expression"));
  CHECK(rules_error({{{"class", "norm"}, {"match", "x"}, {"matches", "y"}}}).starts_with(
      "/rules/0: unknown key \"matches\""));
  CHECK(rules_error({{{"class", {"nccl", "norm"}}, {"match", "x"}}}) ==
        "/rules/0/class/0: \"nccl\" cannot share a rule with other classes");
  CHECK(rules_error(json::array()) == "/rules: 1 to 10000 rules");
  CHECK(rules_error({{{"class", "norm"}, {"match", "x"}}}).empty());
}

// A case whose busiest GPU (rank 1) computes 10 ms: 6 in GEMM forwards, 3 in dgrads, 1 in norms.
work::CaseResult simulated() {
  work::CaseResult r;
  r.name = "layer";
  r.summary.step = Time::from_seconds(0.012);
  r.summary.ranks.resize(2);
  r.summary.critical_rank = topo::GpuId{1};
  r.summary.ranks[1].compute = Time::from_seconds(0.010);
  r.summary.ranks[1].comm = Time::from_seconds(0.004);
  r.summary.compute_kernels.add(work::KernelClass::GemmFprop, Time::from_seconds(0.12));
  r.summary.compute_kernels.add(work::KernelClass::GemmDgrad, Time::from_seconds(0.06));
  r.summary.compute_kernels.add(work::KernelClass::Norm, Time::from_seconds(0.02));
  return r;
}

TEST_CASE("profile.check: per GPU and step, merged rows, hopsim's split of its compute") {
  const auto rules_file = temp_file("hopsim-check-rules.json", json{
      {"schema", "hopsim.kernel_rules/1"},
      {"rules", {{{"class", {"gemm_fprop", "gemm_dgrad"}}, {"match", "^gemm"}},
                 {{"class", "norm"}, {"match", "norm"}},
                 {{"class", "nccl"}, {"match", "^nccl"}}}}}.dump());
  const KernelRules rules = KernelRules::read(rules_file.string());
  std::filesystem::remove(rules_file);
  // Two GPUs, two profiler steps: every figure is the trace's over 4.
  KinetoTrace t;
  t.profiler_steps = 2;
  for (int d = 0; d < 2; ++d) {
    t.kernels.push_back({"gemm_a", 0, 4000, d, 7, std::nullopt});
    t.kernels.push_back({"gemm_b", 4000, 4000, d, 7, std::nullopt});
    t.kernels.push_back({"rmsnorm", 8000, 800, d, 7, std::nullopt});
    t.kernels.push_back({"ncclDevKernel_AllReduce", 0, 2000, d, 20, std::nullopt});
    t.kernels.push_back({"mystery", 9000, 400, d, 7, std::nullopt});
  }
  const ProfileCheck c = check_profile(t, rules, simulated(), {});
  CHECK(c.devices == 2);
  CHECK(c.steps == 2);
  CHECK(c.streams == 4);
  CHECK(c.trace_span_s == approx(9400e-6 / 2));
  REQUIRE(c.rows.size() == 3);
  CHECK(c.rows[0].classes == std::vector<std::string>{"gemm_fprop", "gemm_dgrad"});
  CHECK(c.rows[0].kernels == approx(1.0));
  CHECK(c.rows[0].trace_s == approx(8000e-6 / 2));
  CHECK(c.rows[0].hopsim_s.value() == approx(0.009));  // (0.12 + 0.06) / 0.2 of 10 ms
  CHECK(c.rows[1].classes == std::vector<std::string>{"norm"});
  CHECK(c.rows[1].hopsim_s.value() == approx(0.001));
  CHECK(c.rows[2].classes == std::vector<std::string>{"nccl"});
  CHECK_FALSE(c.rows[2].hopsim_s.has_value());
  CHECK(c.trace_compute_s() == approx(8800e-6 / 2));
  CHECK(c.trace_comm_s() == approx(2000e-6 / 2));
  CHECK(c.unclassified.trace_s == approx(400e-6 / 2));
  REQUIRE(c.unmatched.size() == 1);
  CHECK(c.unmatched[0].name == "mystery");
  CHECK(c.hopsim_compute_s == approx(0.010));
  CHECK(c.hopsim_comm_s == approx(0.004));
  // One GPU and --steps 1: the same kernels count whole.
  const ProfileCheck one = check_profile(t, rules, simulated(), {.steps = 1, .device = 1});
  CHECK(one.devices == 1);
  CHECK(one.rows[0].trace_s == approx(8000e-6));
  CHECK_THROWS_WITH_AS(check_profile(t, rules, simulated(), {.device = 5}),
                       "--device 5: the trace has no kernels on that GPU; it has kernels on 0, 1",
                       config::ConfigError);
}

}  // namespace
}  // namespace hopsim::profile

namespace hopsim::profile {
namespace {

json linked(json kernel_event, std::int64_t id) {
  kernel_event["args"]["External id"] = id;
  return kernel_event;
}

json op(const std::string& name, std::int64_t id, const json& dims, const json& types) {
  return {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", 0},
          {"dur", 1}, {"args", {{"External id", id}, {"Input Dims", dims}, {"Input type", types}}}};
}

}  // namespace

TEST_CASE("profile.write_calibration: GEMM and norm cells from linked operators' shapes") {
  const KernelRules rules = KernelRules::read(KernelRules::default_path());
  const std::string tn = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cublas";
  const std::string nt = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_cublas";
  const json bf16 = {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"};
  json events = json::array({
      op("aten::mm", 1, {{4096, 7168}, {7168, 2048}}, bf16),
      linked(kernel(tn, 0, 100), 1),
      op("aten::mm", 2, {{4096, 7168}, {7168, 2048}}, bf16),
      linked(kernel(tn, 200, 120), 2),  // the same shape: one cell, the mean
      op("aten::addmm", 3, {{1024}, {512, 256}, {256, 1024}}, bf16),
      linked(kernel(tn, 400, 30), 3),   // addmm: the bias first
      op("aten::linear", 4, {{2, 8, 64}, {32, 64}}, bf16),
      linked(kernel(nt, 500, 5), 4),    // linear: m = 2 x 8; wgrad by its name
      op("aten::layer_norm", 5, {{4096, 7168}, {7168}}, bf16),
      linked(kernel("layer_norm::ln_fwd_kernel<bf16>", 600, 115), 5),
      op("LayerNormBackward", 6, json::array({json::array({4096, 7168})}), bf16),
      linked(kernel("layer_norm::ln_bwd_kernel<bf16>", 700, 150), 6),
      linked(kernel("fp8_ptp128c_gemm", 800, 9), 1),   // fprop or dgrad: ambiguous
      kernel(tn, 900, 50),                             // no External id: no shapes
      op("aten::mm", 7, {{64, 64}, {64, 64}}, {"float", "float"}),
      linked(kernel(tn, 950, 3), 7),                   // FP32: no table for it
      kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 0, 500)});  // not compute
  const KinetoTrace trace = parse_kineto_trace(
      json({{"deviceProperties", {{{"name", "NVIDIA H100 80GB HBM3"}, {"numSms", 132}}}},
            {"traceEvents", events}})
          .dump(),
      "t.json");
  const TraceCalibration c =
      calibration_from_trace(trace, rules, {.trace = "t.json", .base = "h100-published",
                                            .device = std::nullopt, .created_utc = "now"});
  INFO(c.file.dump());
  CHECK(c.kernels == 6);
  CHECK(c.left_out == std::map<std::string, std::size_t>{
                          {"ambiguous class", 1}, {"no shapes", 1}, {"dtype", 1}});
  const auto& f = c.file;
  CHECK(f["device"] == nlohmann::ordered_json({{"name", "NVIDIA H100 80GB HBM3"},
                                               {"sm_count", 132}}));
  CHECK(f["base"] == "h100-published");
  REQUIRE(f["tables"].size() == 4);
  // Tables in key order: gemm bwd wgrad, gemm fwd, memory bwd norm, memory fwd norm.
  const auto& wgrad = f["tables"][0];
  CHECK(wgrad["key"] == nlohmann::ordered_json({{"dtype", "bf16"}, {"role", "wgrad"}}));
  CHECK(wgrad["axes"][0]["values"] == json({16}));
  CHECK(wgrad["axes"][1]["values"] == json({32}));
  CHECK(wgrad["axes"][2]["values"] == json({64}));
  const auto& fprop = f["tables"][1];
  CHECK(fprop["axes"][0]["values"] == json({512, 4096}));
  CHECK(fprop["axes"][1]["values"] == json({1024, 2048}));
  CHECK(fprop["axes"][2]["values"] == json({256, 7168}));
  // Row-major m, n, k: (512, 1024, 256) = 30 us; (4096, 2048, 7168) = mean(100, 120).
  CHECK(fprop["time_us"] == json({30.0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                  110.0}));
  CHECK(f["tables"][2]["axes"][0]["values"] == json({6 * 4096 * 7168 + 4 * 4096}));
  CHECK(f["tables"][2]["pass"] == "bwd");
  CHECK(f["tables"][3]["axes"][0]["values"] == json({4 * 4096 * 7168 + 4 * 4096}));
  CHECK(f["tables"][3]["time_us"] == json({115.0}));

  const KinetoTrace bare = parse_kineto_trace(
      json({{"traceEvents", {kernel(tn, 0, 10)}}}).dump(), "bare.json");
  CHECK_THROWS_WITH_AS(
      calibration_from_trace(bare, rules, {.trace = "bare.json", .base = "", .device = {},
                                           .created_utc = "now"}),
      "bare.json: no kernel could be written to a calibration table (left out: 1 no shapes); "
      "it needs GEMM or norm kernels whose class one rule names alone, linked by \"External "
      "id\" to the operator that launched them, recorded with record_shapes=True",
      config::ConfigError);
}

}  // namespace hopsim::profile
