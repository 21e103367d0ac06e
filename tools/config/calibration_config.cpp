// Parses a calibration file into work::Calibration, checking every value it reads.
#include "tools/config/calibration_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/config/json_file.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::config {
namespace {

constexpr std::string_view kSchema = "hopsim.calibration/1";
// Axis values and integer key values: counts and extents, within the compute model's range.
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 31;

std::string non_empty(const Node& n) {
  std::string s = n.string();
  if (s.empty()) {
    n.fail("must not be empty");
  }
  return s;
}

// Library and driver versions: written as text ("580.159") or as numbers (13000).
void version(const Node& n) {
  if (n.is_string()) {
    n.string();
  } else {
    n.integer_in(0, INT64_MAX);
  }
}

void parse_ceilings(const Node& n, work::CalibrationCeilings& c) {
  n.allow_only(Section::CalibrationCeilings);
  if (n.has("copy_GBps")) {
    c.copy_GBps = n.at("copy_GBps").positive();
  }
  if (n.has("bf16_gemm_tflops")) {
    c.bf16_tflops = n.at("bf16_gemm_tflops").positive();
  }
  if (n.has("fp8_gemm_tflops")) {
    c.fp8_tflops = n.at("fp8_gemm_tflops").positive();
  }
}

void parse_device(const Node& n, work::Calibration& cal) {
  n.allow_only(Section::CalibrationDevice);
  cal.device = non_empty(n.at("name"));
  if (n.has("equivalent_gpus")) {
    const Node list = n.at("equivalent_gpus");
    list.expect_array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      cal.equivalent_gpus.push_back(non_empty(list.at(i)));
    }
  }
  if (n.has("cc")) {
    n.at("cc").string();
  }
  if (n.has("sm_count")) {
    cal.sm_count = n.at("sm_count").integer_in(1, 1'000'000);
  }
  for (std::string_view key : {"driver", "cuda_runtime", "cublas", "cudnn"}) {
    if (n.has(key)) {
      version(n.at(key));
    }
  }
  if (n.has("clocks_mhz")) {
    const Node clocks = n.at("clocks_mhz");
    clocks.expect_object();
    for (const auto& item : clocks.json().items()) {
      clocks.at(item.key()).positive();
    }
  }
  if (n.has("ceilings")) {
    parse_ceilings(n.at("ceilings"), cal.ceilings);
  }
  if (n.has("hbm_bytes")) {
    cal.hbm_bytes = static_cast<double>(n.at("hbm_bytes").integer_in(1, INT64_MAX));
  }
  // Datasheet figures, which let another GPU use the table scaled ("calibration": "auto").
  constexpr double kMaxFigure = 1e6;  // TFLOP/s or GB/s: far above any GPU
  if (n.has("peak_bf16_tflops")) {
    cal.peaks.bf16_tflops = n.at("peak_bf16_tflops").positive(kMaxFigure);
  }
  if (n.has("peak_fp8_tflops")) {
    cal.peaks.fp8_tflops = n.at("peak_fp8_tflops").positive(kMaxFigure);
  }
  if (n.has("hbm_GBps")) {
    cal.peaks.hbm_GBps = n.at("hbm_GBps").positive(kMaxFigure);
  }
}

// Free-form, but flat: how the numbers were taken (timer, L2 flush, statistic, ...).
void parse_method(const Node& n) {
  n.expect_object();
  for (const auto& item : n.json().items()) {
    const Node value = n.at(item.key());
    if (value.is_object() || value.is_array()) {
      value.fail(
          fmt::format("expected a string, number or boolean, got {}", value.json().type_name()));
    }
  }
}

// The optional descriptive keys of a table (see CalibrationTable::variant).
std::map<std::string, std::string> parse_variant(const Node& n, const std::string& op) {
  std::map<std::string, std::string> variant;
  if (op == "gemm" && n.has("layout")) {
    variant.emplace("layout", n.at("layout").one_of({"NN", "NT", "TN", "TT"}));
  }
  if (op == "grouped_gemm" && n.has("imbalance")) {
    const Node v = n.at("imbalance");
    const std::string text = v.string();
    if (text != "uniform" && !(text.starts_with("ramp") && text.size() > 4 &&
                               text.find_first_not_of("0123456789.", 4) == std::string::npos)) {
      v.fail(fmt::format("expected \"uniform\" or \"rampR\" (max/mean R), got \"{}\"", text));
    }
    variant.emplace("imbalance", text);
  }
  if ((op == "gemm" || op == "grouped_gemm") && n.has("role")) {
    variant.emplace("role", n.at("role").one_of({"wgrad", "dgrad"}));
  }
  return variant;
}

std::map<std::string, std::string> parse_key(const Node& n, const std::string& op) {
  if (op == "gemm") {
    n.allow_only(Section::GemmKey);
  } else if (op == "grouped_gemm") {
    n.allow_only(Section::GroupedGemmKey);
  } else {
    n.allow_only(op == "memory" ? Section::MemoryKey : Section::AttentionKey);
  }
  std::map<std::string, std::string> key;
  for (std::string_view name : work::calibration_keys(op)) {
    const Node value = n.at(name);
    std::string text;
    if (name == "dtype") {
      text = value.one_of({"bf16", "fp8"});
    } else if (name == "mask") {
      text = value.one_of({"none", "causal_top_left", "causal_bottom_right"});
    } else if (name == "kernel") {
      text = value.one_of({"attention_bwd_prep", "fp8_cast", "norm", "rotary", "swiglu",
                           "residual", "router", "permute", "cross_entropy"});
    } else {
      text = std::to_string(value.integer_in(1, kMaxExtent));
    }
    key.emplace(name, std::move(text));
  }
  return key;
}

std::vector<work::CalibrationAxis> parse_axes(const Node& n, const std::string& op) {
  n.expect_array();
  const auto names = work::calibration_axes(op);
  const std::string expected = fmt::format("\"{}\"", fmt::join(names, "\", \""));
  if (n.size() != names.size()) {
    n.fail(
        fmt::format("{} tables have {} axes ({}), got {}", op, names.size(), expected, n.size()));
  }
  std::vector<work::CalibrationAxis> axes;
  for (std::size_t j = 0; j < names.size(); ++j) {
    const Node a = n.at(j);
    a.allow_only(Section::CalibrationAxis);
    work::CalibrationAxis axis;
    const Node name = a.at("name");
    axis.name = name.string();
    if (axis.name != names[j]) {
      name.fail(fmt::format("expected \"{}\" ({} axes are {}, in this order), got \"{}\"", names[j],
                            op, expected, axis.name));
    }
    const Node values = a.at("values");
    values.expect_array();
    if (values.size() == 0) {
      values.fail("expected at least one value");
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::int64_t v = values.at(i).integer_in(1, kMaxExtent);
      if (!axis.values.empty() && v <= axis.values.back()) {
        values.at(i).fail(fmt::format("got {} after {}; axis values must be strictly ascending", v,
                                      axis.values.back()));
      }
      axis.values.push_back(v);
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

// One time per grid cell, row-major: a positive number of microseconds, or null (no data).
std::vector<std::optional<double>> parse_times(const Node& n,
                                               const std::vector<work::CalibrationAxis>& axes) {
  n.expect_array();
  std::size_t cells = 1;
  std::vector<std::size_t> sizes;
  for (const work::CalibrationAxis& axis : axes) {
    sizes.push_back(axis.values.size());
    cells *= axis.values.size();
  }
  if (n.size() != cells) {
    n.fail(fmt::format("has {} values, expected {} (the product of the axis sizes {})", n.size(),
                       cells, fmt::join(sizes, " x ")));
  }
  std::vector<std::optional<double>> times;
  times.reserve(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    const Node cell = n.at(i);
    if (cell.json().is_null()) {
      times.emplace_back();
      continue;
    }
    const double us = cell.json().is_number() ? cell.json().get<double>() : 0;
    if (!cell.json().is_number() || !(us > 0) || !std::isfinite(us)) {
      cell.fail(fmt::format("expected a time > 0 (us) or null, got {}", cell.json().dump()));
    }
    times.emplace_back(us);
  }
  return times;
}

work::CalibrationTable parse_table(const Node& n, bool published) {
  n.allow_only(Section::CalibrationTable);
  work::CalibrationTable t;
  t.op = n.at("op").one_of({"gemm", "grouped_gemm", "attn", "memory"});
  t.pass = n.at("pass").one_of({"fwd", "bwd"});
  t.impl = non_empty(n.at("impl"));
  t.key = parse_key(n.at("key"), t.op);
  t.variant = parse_variant(n.at("key"), t.op);
  if (t.variant.contains("role") && t.pass != "bwd") {
    n.at("key").at("role").fail(fmt::format(
        "a role says which backward GEMM a bwd table times; this table's pass is \"{}\"",
        t.pass));
  }
  t.axes = parse_axes(n.at("axes"), t.op);
  const Node flops = n.at("flops");
  t.flops =
      flops.one_of({"gemm_v1", "grouped_gemm_v1", "attn_fwd_v1", "attn_bwd_v1", "bytes_v1"});
  const std::string_view expected = work::calibration_flops(t.op, t.pass);
  if (t.flops != expected) {
    flops.fail(fmt::format("\"{}\" is not the work of a {} {} table; expected \"{}\"", t.flops,
                           t.op, t.pass, expected));
  }
  t.time_us = parse_times(n.at("time_us"), t.axes);
  for (std::string_view spread : {"p10_us", "p90_us"}) {
    if (n.has(spread)) {
      parse_times(n.at(spread), t.axes);
    }
  }
  if (n.has("source")) {
    t.citation = non_empty(n.at("source"));
  } else if (published) {
    n.fail(
        "missing key \"source\"; every table of a published file cites where its numbers "
        "come from");
  }
  return t;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      out.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!out.back().empty()) {
      out.emplace_back();
    }
  }
  return out;
}

}  // namespace

work::Calibration parse_calibration(const Node& root) {
  root.expect_object();
  const Node schema = root.at("schema");
  if (schema.string() != kSchema) {
    schema.fail(fmt::format("expected \"{}\", got \"{}\"", kSchema, schema.string()));
  }
  root.allow_only(Section::Calibration);
  root.at("created_utc").string();
  work::Calibration cal;
  cal.source = root.at("source").one_of({"measured", "published"});
  parse_device(root.at("device"), cal);
  parse_method(root.at("method"));
  if (root.has("description")) {
    root.at("description").string();
  }
  if (root.has("base")) {
    cal.base = non_empty(root.at("base"));
  }
  if (root.has("auto")) {
    cal.automatic = root.at("auto").boolean();
  }
  const Node tables = root.at("tables");
  tables.expect_array();
  if (tables.size() == 0) {
    tables.fail("expected at least one table");
  }
  for (std::size_t i = 0; i < tables.size(); ++i) {
    work::CalibrationTable t = parse_table(tables.at(i), cal.source == "published");
    for (std::size_t j = 0; j < i; ++j) {
      const work::CalibrationTable& u = cal.tables[j];
      if (u.op == t.op && u.pass == t.pass && u.impl == t.impl && u.key == t.key &&
          u.variant == t.variant) {
        tables.at(i).fail(fmt::format("same op, pass, impl and key as /tables/{}", j));
      }
    }
    cal.tables.push_back(std::move(t));
  }
  return cal;
}

bool calibration_names_gpu(const work::Calibration& calibration, const std::string& gpu_name) {
  const std::string model = words(gpu_name).front();
  if (model.empty()) {
    return true;
  }
  const std::vector<std::string> device = words(calibration.device);
  return std::find(device.begin(), device.end(), model) != device.end();
}

bool calibration_fits(const work::Calibration& calibration, const std::string& gpu_name) {
  const std::string model = words(gpu_name).front();
  return calibration_names_gpu(calibration, gpu_name) ||
         std::find(calibration.equivalent_gpus.begin(), calibration.equivalent_gpus.end(),
                   model) != calibration.equivalent_gpus.end();
}

void check_calibration_for(const work::Calibration& calibration, const std::string& gpu_name,
                           const std::string& file) {
  if (calibration_fits(calibration, gpu_name)) {
    return;
  }
  const std::string model = words(gpu_name).front();
  throw ConfigError(fmt::format(
      "{}: /device/name: the table is for \"{}\", but the cluster's GPU is \"{}\"; use a "
      "calibration table for the {}, \"auto\" (the shipped table for it, or the nearest one "
      "scaled to it), or none (the roofline)",
      file, calibration.device, gpu_name, model));
}

std::vector<std::string> check_calibration_plausible(const work::Calibration& calibration,
                                                     const work::GpuFigures& gpu,
                                                     const std::string& file) {
  const work::CalibrationFindings found = work::check_plausible(calibration, gpu);
  if (!found.problems.empty()) {
    const Problem& p = found.problems.front();
    throw ConfigError(fmt::format("{}: {}: {}", file, p.path, p.message));
  }
  std::vector<std::string> warnings;
  for (const Problem& w : found.warnings) {
    warnings.push_back(fmt::format("{}: {}: {}", file, w.path, w.message));
  }
  return warnings;
}

work::GpuFigures figures_of(const topo::GpuSpec& gpu) {
  work::GpuFigures f;
  f.peak_bf16_tflops = gpu.peak_bf16_tflops;
  f.peak_fp8_tflops = gpu.peak_fp8_tflops;
  f.hbm_GBps = gpu.hbm_GBps;
  f.hbm_GB = gpu.hbm_GB;
  if (gpu.sms > 0) {
    f.sms = gpu.sms;
  }
  return f;
}

work::GpuFigures figures_of(const work::Calibration& calibration) {
  work::GpuFigures f;
  f.peak_bf16_tflops = calibration.ceilings.bf16_tflops;
  f.peak_fp8_tflops = calibration.ceilings.fp8_tflops;
  f.hbm_GBps = calibration.ceilings.copy_GBps;
  f.peaks_are_lower_bounds = true;
  return f;
}

work::GpuFigures datasheet_figures_of(const work::Calibration& calibration) {
  work::GpuFigures f;
  f.peak_bf16_tflops = calibration.peaks.bf16_tflops;
  f.peak_fp8_tflops = calibration.peaks.fp8_tflops;
  f.hbm_GBps = calibration.peaks.hbm_GBps;
  return f;
}

std::optional<work::TableScaling> scaling_to(const work::Calibration& calibration,
                                             const std::string& gpu_name,
                                             const std::string& subject) {
  if (calibration_fits(calibration, gpu_name)) {
    return std::nullopt;
  }
  if (!calibration.peaks.complete()) {
    throw ConfigError(fmt::format(
        "{} is for \"{}\", not the cluster's {}, and its device block lacks the datasheet "
        "peak_bf16_tflops, peak_fp8_tflops and hbm_GBps its times would be scaled by",
        subject, calibration.device, gpu_name));
  }
  return calibration.peaks.scaling();
}

namespace {

// More bases than this in one chain is an error (a chain that leads back to itself would never
// end): the shipped tables chain at most measured -> published -> another GPU's published.
constexpr std::size_t kMaxBaseChain = 4;

// attach_base, with the names of the bases already on the chain.
std::string attach_chain(work::Calibration& calibration, const std::string& file,
                         const std::string& gpu_name, std::vector<std::string>& chain) {
  if (calibration.base.empty()) {
    return {};
  }
  const std::string where = file + ": /base";
  const bool cycle = std::find(chain.begin(), chain.end(), calibration.base) != chain.end();
  chain.push_back(calibration.base);
  if (cycle || chain.size() > kMaxBaseChain) {
    throw ConfigError(fmt::format(
        "{}: the chain of bases {} {}", where, fmt::join(chain, " -> "),
        cycle ? "leads back to itself" : fmt::format("is longer than {}", kMaxBaseChain)));
  }
  const std::filesystem::path base_path = find_preset("calibration", calibration.base, where);
  const std::string base_file = display_path(base_path);
  const nlohmann::json doc = read_json_file(base_path.string());
  work::Calibration base = parse_calibration(Node(doc, base_file));
  const std::optional<work::TableScaling> scaling =
      scaling_to(base, gpu_name, fmt::format("{}: \"{}\"", where, calibration.base));
  if (base.peaks.complete()) {
    check_calibration_plausible(base, datasheet_figures_of(base), base_file);
  }
  const std::size_t own = calibration.tables.size();
  const std::size_t base_own = base.tables.size();
  const std::string deeper = attach_chain(base, base_file, gpu_name, chain);
  for (work::CalibrationTable t : base.tables) {
    if (t.tier == 0) {  // the base's own; its bases' tables keep the scaling set for them
      t.scaling = scaling;
    }
    t.tier += 1;
    calibration.tables.push_back(std::move(t));
  }
  return fmt::format(
      "where its own {} tables have no answer, the {} of its base {} ({}){}{}", own, base_own,
      calibration.base, base.device,
      scaling ? fmt::format(", scaled from that GPU to the {}", gpu_name) : std::string(),
      deeper.empty() ? std::string() : fmt::format("; {}: {}", calibration.base, deeper));
}

}  // namespace

std::string attach_base(work::Calibration& calibration, const std::string& file,
                        const std::string& gpu_name) {
  std::vector<std::string> chain;
  return attach_chain(calibration, file, gpu_name, chain);
}

}  // namespace hopsim::config
