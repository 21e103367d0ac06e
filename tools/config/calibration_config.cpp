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
#include "tools/config/keys/calibration_keys.hpp"
#include "tools/config/keys/calibration_table_keys.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::config {
namespace {

namespace dk = keys::device;
namespace tk = keys::table;

// Library and driver versions: written as text ("580.159") or as numbers (13000).
void version(const Node& n) {
  if (n.is_string()) {
    n.string();
  } else {
    n.integer_in(0, INT64_MAX);
  }
}

void parse_ceilings(const Node& n, work::CalibrationCeilings& c) {
  namespace ck = keys::ceilings;
  n.allow_only(ck::kSection);
  c.copy_GBps = n.read_if(ck::kCopyGBps);
  c.bf16_tflops = n.read_if(ck::kBf16GemmTflops);
  c.fp8_tflops = n.read_if(ck::kFp8GemmTflops);
}

void parse_device(const Node& n, work::Calibration& cal) {
  n.allow_only(dk::kSection);
  cal.device = n.read(dk::kName);
  if (n.has(dk::kEquivalentGpus)) {
    const Node list = n.at(dk::kEquivalentGpus);
    list.expect_array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      cal.equivalent_gpus.push_back(list.at(i).string());
      if (cal.equivalent_gpus.back().empty()) {
        list.at(i).fail("must not be empty");
      }
    }
  }
  (void)n.read_if(dk::kCc);
  if (const auto sms = n.read_if(dk::kSmCount)) {
    cal.sm_count = *sms;
  }
  for (const std::string_view key :
       {dk::kDriver.name, dk::kCudaRuntime.name, dk::kCublas.name, dk::kCudnn.name}) {
    if (n.has(key)) {
      version(n.at(key));
    }
  }
  if (n.has(dk::kClocksMhz)) {
    const Node clocks = n.at(dk::kClocksMhz);
    clocks.expect_object();
    for (const auto& item : clocks.json().items()) {
      clocks.at(item.key()).positive();
    }
  }
  if (n.has(dk::kCeilings)) {
    parse_ceilings(n.at(dk::kCeilings), cal.ceilings);
  }
  if (const auto bytes = n.read_if(dk::kHbmBytes)) {
    cal.hbm_bytes = static_cast<double>(*bytes);
  }
  // Datasheet figures, which let another GPU use the table scaled ("calibration": "auto").
  cal.peaks.bf16_tflops = n.read_if(dk::kPeakBf16Tflops);
  cal.peaks.fp8_tflops = n.read_if(dk::kPeakFp8Tflops);
  cal.peaks.fp4_tflops = n.read_if(dk::kPeakFp4Tflops);
  cal.peaks.hbm_GBps = n.read_if(dk::kHbmGBps);
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
  if (op == "gemm" && n.has(keys::gemm_key::kLayout)) {
    variant.emplace(keys::gemm_key::kLayout.name, n.read_text(&keys::gemm_key::kLayout));
  }
  namespace gk = keys::grouped_gemm_key;
  if (op == "grouped_gemm" && n.has(gk::kImbalance)) {
    const Node v = n.at(gk::kImbalance);
    const std::string text = v.string();
    if (text != "uniform" && !(text.starts_with("ramp") && text.size() > 4 &&
                               text.find_first_not_of("0123456789.", 4) == std::string::npos)) {
      v.fail(fmt::format("expected \"uniform\" or \"rampR\" (max/mean R), got \"{}\"", text));
    }
    variant.emplace(gk::kImbalance.name, text);
  }
  // The two roles are the same key, documented per op.
  const ChoiceKey& role = op == "gemm" ? keys::gemm_key::kRole : gk::kRole;
  if ((op == "gemm" || op == "grouped_gemm") && n.has(role)) {
    variant.emplace(role.name, n.read_text(&role));
  }
  return variant;
}

// The op's section of key declarations: which keys its table key may hold.
const Section& key_section(const std::string& op) {
  if (op == "gemm") {
    return keys::gemm_key::kSection;
  }
  if (op == "grouped_gemm") {
    return keys::grouped_gemm_key::kSection;
  }
  return op == "memory" ? keys::memory_key::kSection : keys::attention_key::kSection;
}

// The categorical keys the op's tables are found by (work::calibration_keys), each read through
// its declaration in the op's section.
std::map<std::string, std::string> parse_key(const Node& n, const std::string& op) {
  const Section& section = key_section(op);
  n.allow_only(section);
  std::map<std::string, std::string> key;
  for (std::string_view name : work::calibration_keys(op)) {
    const KeyRef* declared = find_key(section, name);
    HOPSIM_ASSERT(declared != nullptr, "calibration key \"{}\" of op {} is not declared", name, op);
    key.emplace(name, n.read_text(*declared));
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
  namespace xk = keys::axis;
  for (std::size_t j = 0; j < names.size(); ++j) {
    const Node a = n.at(j);
    a.allow_only(xk::kSection);
    work::CalibrationAxis axis;
    const Node name = a.at(xk::kName);
    axis.name = a.read(xk::kName);
    if (axis.name != names[j]) {
      name.fail(fmt::format("expected \"{}\" ({} axes are {}, in this order), got \"{}\"", names[j],
                            op, expected, axis.name));
    }
    const Node values = a.at(xk::kValues);
    values.expect_array();
    if (values.size() == 0) {
      values.fail("expected at least one value");
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::int64_t v = values.at(i).read_item(xk::kValues);
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

// The optional p10_us and p90_us: one time per cell each, and no cell's p10 above its p90.
void parse_spread(const Node& n, const std::vector<work::CalibrationAxis>& axes) {
  std::vector<std::optional<double>> p10;
  if (n.has(tk::kP10Us)) {
    p10 = parse_times(n.at(tk::kP10Us), axes);
  }
  if (!n.has(tk::kP90Us)) {
    return;
  }
  const std::vector<std::optional<double>> p90 = parse_times(n.at(tk::kP90Us), axes);
  for (std::size_t c = 0; c < p10.size(); ++c) {
    if (p10[c] && p90[c] && *p10[c] > *p90[c]) {
      n.at(tk::kP10Us)
          .at(c)
          .fail(fmt::format("the 10th percentile, {:g} us, is above the 90th, {:g} us (p90_us/{})",
                            *p10[c], *p90[c], c));
    }
  }
}

work::CalibrationTable parse_table(const Node& n, bool published) {
  n.allow_only(tk::kSection);
  work::CalibrationTable t;
  t.op = tk::kOpNames[n.read(tk::kOp)];
  t.pass = tk::kPassNames[n.read(tk::kPass)];
  t.impl = n.read(tk::kImpl);
  t.key = parse_key(n.at(tk::kKey), t.op);
  t.variant = parse_variant(n.at(tk::kKey), t.op);
  if (t.variant.contains("role") && t.pass != "bwd") {
    n.at(tk::kKey)
        .at(keys::gemm_key::kRole)
        .fail(fmt::format(
            "a role says which backward GEMM a bwd table times; this table's pass is \"{}\"",
            t.pass));
  }
  t.axes = parse_axes(n.at(tk::kAxes), t.op);
  t.flops = tk::kFlopsNames[n.read(tk::kFlops)];
  const std::string_view expected = work::calibration_flops(t.op, t.pass);
  if (t.flops != expected) {
    n.at(tk::kFlops)
        .fail(fmt::format("\"{}\" is not the work of a {} {} table; expected \"{}\"", t.flops, t.op,
                          t.pass, expected));
  }
  t.time_us = parse_times(n.at(tk::kTimeUs), t.axes);
  parse_spread(n, t.axes);
  if (n.has(tk::kSource)) {
    t.citation = n.read(tk::kSource);
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
  namespace ck = keys::calibration;
  root.expect_object();
  (void)root.read(ck::kSchema);
  root.allow_only(ck::kSection);
  (void)root.read(ck::kCreatedUtc);
  work::Calibration cal;
  cal.source = ck::kSourceNames[root.read(ck::kSource)];
  parse_device(root.at(ck::kDevice), cal);
  parse_method(root.at(ck::kMethod));
  (void)root.read_if(ck::kDescription);
  cal.base = root.read_if(ck::kBase).value_or(cal.base);
  cal.automatic = root.read(ck::kAuto);
  const Node tables = root.at(ck::kTables);
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
         std::find(calibration.equivalent_gpus.begin(), calibration.equivalent_gpus.end(), model) !=
             calibration.equivalent_gpus.end();
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

namespace {

// "--set cluster.gpu.hbm_GBps=1" when a --set wrote the figure under `gpu_node`, else "".
std::string set_of(const Node* gpu_node, const std::string& figure) {
  if (gpu_node == nullptr || figure.empty() || !gpu_node->is_object() || !gpu_node->has(figure)) {
    return {};
  }
  const Node value = gpu_node->at(figure);
  std::string where = value.origin()->describe(value.path());
  return where.starts_with("--set") ? where : std::string();
}

}  // namespace

std::vector<std::string> check_calibration_plausible(const work::Calibration& calibration,
                                                     const work::GpuFigures& gpu,
                                                     const std::string& file,
                                                     const Node* gpu_node) {
  const work::CalibrationFindings found = work::check_plausible(calibration, gpu);
  if (!found.problems.empty()) {
    const work::CalibrationProblem& p = found.problems.front();
    if (const std::string set = set_of(gpu_node, p.figure); !set.empty()) {
      throw ConfigError(
          fmt::format("{}: the GPU's {} makes the calibration table implausible: "
                      "{}: {}: {}",
                      set, p.figure, file, p.path, p.message));
    }
    throw ConfigError(fmt::format("{}: {}: {}", file, p.path, p.message));
  }
  std::vector<std::string> warnings;
  for (const Problem& w : found.warnings) {
    warnings.push_back(fmt::format("{}: {}: {}", file, w.path, w.message));
  }
  return warnings;
}

void check_equivalence(const work::Calibration& calibration, const topo::GpuSpec& gpu,
                       const std::string& file) {
  if (calibration_names_gpu(calibration, gpu.name) || !calibration_fits(calibration, gpu.name)) {
    return;
  }
  const std::string model = words(gpu.name).front();
  const auto& list = calibration.equivalent_gpus;
  const auto at = fmt::format("{}: /device/equivalent_gpus/{}", file,
                              std::find(list.begin(), list.end(), model) - list.begin());
  const auto& peak = calibration.peaks.bf16_tflops;
  if (!calibration.sm_count || !peak) {
    throw ConfigError(fmt::format(
        "{}: the table lists the {} as equivalent, but its device block lacks the sm_count and "
        "peak_bf16_tflops that would show the same SMs and clocks",
        at, model));
  }
  const auto off = [](double a, double b) { return std::abs(a / b - 1) > work::kPeakMargin; };
  if ((gpu.sms > 0 && *calibration.sm_count != gpu.sms) || off(*peak, gpu.peak_bf16_tflops) ||
      (calibration.peaks.fp8_tflops && off(*calibration.peaks.fp8_tflops, gpu.peak_fp8_tflops))) {
    throw ConfigError(fmt::format(
        "{}: the table's device \"{}\" has {} SMs and a BF16 peak of {:g} TFLOP/s, the {} {} and "
        "{:g}: not the same SMs and clocks, so not equivalent",
        at, calibration.device, *calibration.sm_count, *peak, gpu.name, gpu.sms,
        gpu.peak_bf16_tflops));
  }
}

std::vector<std::string> check_calibration_on(const work::Calibration& calibration,
                                              const topo::GpuSpec& gpu, const std::string& file,
                                              const Node* gpu_node) {
  check_calibration_for(calibration, gpu.name, file);
  check_equivalence(calibration, gpu, file);
  return check_calibration_plausible(calibration, figures_of(gpu), file, gpu_node);
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
