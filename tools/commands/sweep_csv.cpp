// The CSV of `hopsim sweep`: a header of the varied keys and the figures, a row a point, and
// the rows an --out file already holds when a sweep is resumed.
#include "tools/commands/sweep_csv.hpp"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "tools/commands/cp_figures.hpp"
#include "tools/commands/csv.hpp"
#include "tools/commands/sweep_points.hpp"
#include "tools/commands/throughput_figures.hpp"
#include "tools/config/node.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools::sweep {
namespace {

// The columns after the varied keys: the figures(), then row_fields()' own three, then the
// sweep's id (row()). The throughput columns are blank for kinds without tokens (collectives,
// flows).
const char* const kColumns[] = {
    "step_time_s",    "gpus",   "tokens",          "tokens_per_s_per_gpu", "model_tflops_per_gpu",
    "mfu",            "compute_s", "comm_s",       "exposed_comm_s",       "compute_comm_ratio",
    "bytes_ib",       "bytes_nvlink", "imbalance", "wall_s",               "status",
    "error",          kSweepIdColumn};

constexpr std::size_t kFigures = 13;
static_assert(kStatusField == kFigures + 1);

}  // namespace

std::string header(const std::vector<std::string>& point) {
  std::string h = "point";
  for (const std::string& kv : point) {
    h += "," + csv_field(kv.substr(0, kv.find('=')));
  }
  for (const char* c : kColumns) {
    h += std::string(",") + c;
  }
  return h;
}

std::size_t column_count(const std::vector<std::string>& point) {
  return 1 + point.size() + std::size(kColumns);
}

std::vector<std::string> figures(const work::RunResult& r) {
  const work::CaseResult& c = r.cases.back();
  const work::Summary& s = c.summary;
  const work::RankTime& busiest = s.ranks[s.critical_rank.index()];
  double imbalance = 0;
  if (c.ep() != nullptr) {
    imbalance = work::max_over_mean(c.ep()->tokens_per_rank);
  } else if (c.cp() != nullptr && !c.cp()->flops_per_rank.empty()) {
    imbalance = max_over_min(c.cp()->flops_per_rank);
  } else if (s.mean_busy_s > 0) {
    imbalance = busiest.busy.seconds() / s.mean_busy_s;
  }
  const double comm = busiest.comm.seconds();
  const std::optional<ThroughputFigures> t = throughput_figures(c);
  const auto per_token = [&](double ThroughputFigures::*field, const char* format) {
    return t ? fmt::format(fmt::runtime(format), (*t).*field) : std::string();
  };
  return {fmt::format("{:.9g}", s.step.seconds()),
          t ? fmt::format("{}", t->gpus) : std::string(),
          per_token(&ThroughputFigures::tokens, "{:.9g}"),
          per_token(&ThroughputFigures::tokens_per_s_per_gpu, "{:.6g}"),
          per_token(&ThroughputFigures::model_tflops_per_gpu, "{:.6g}"),
          per_token(&ThroughputFigures::mfu, "{:.4g}"),
          fmt::format("{:.9g}", busiest.compute.seconds()),
          fmt::format("{:.9g}", comm),
          fmt::format("{:.9g}", busiest.exposed.seconds()),
          comm > 0 ? fmt::format("{:.6g}", busiest.compute.seconds() / comm) : std::string(),
          fmt::format("{}", s.ib_bytes.n),
          fmt::format("{}", s.nvlink_bytes.n),
          fmt::format("{:.6g}", imbalance)};
}

std::vector<std::string> row_fields(std::vector<std::string> figs, double wall_s,
                                    const char* status, std::string error) {
  figs.resize(kFigures);
  figs.push_back(fmt::format("{:.3f}", wall_s));
  figs.emplace_back(status);
  figs.push_back(std::move(error));
  return figs;
}

std::string sweep_id(const std::string& experiment,
                     const std::vector<std::vector<std::string>>& points) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a
  const auto add = [&h](const std::string& text) {
    for (const char c : text) {
      h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
    h = (h ^ 0xFFU) * 1099511628211ULL;  // a separator no UTF-8 text holds
  };
  add(experiment);
  for (const std::vector<std::string>& point : points) {
    for (const std::string& kv : point) {
      add(kv);
    }
  }
  return fmt::format("{:016x}", h);
}

std::string row(std::size_t index, const std::vector<std::string>& point,
                const std::vector<std::string>& fields, const std::string& id) {
  std::string line = fmt::format("{}", index);
  for (const std::string& kv : point) {
    line += "," + csv_field(kv.substr(kv.find('=') + 1));
  }
  for (const std::string& f : fields) {
    line += "," + csv_field(f);
  }
  line += "," + csv_field(id) + "\n";
  return line;
}

namespace {

// Throws when `fields`, a row of the CSV at `path`, is not point `index` of `points` (a row of
// a sweep over other values, or of more points).
void check_row(const std::string& path, const std::vector<std::string>& fields,
               std::size_t index, const std::vector<std::vector<std::string>>& points) {
  if (index >= points.size()) {
    throw config::ConfigError(fmt::format(
        "{}: has a row for point {}, this sweep has {} points: it is another sweep's; remove "
        "it, pick another --out, or leave out --resume",
        path, index, points.size()));
  }
  const std::vector<std::string>& point = points[index];
  for (std::size_t k = 0; k < point.size(); ++k) {
    const std::string& kv = point[k];
    const std::string value = kv.substr(kv.find('=') + 1);
    if (fields[1 + k] != value) {
      throw config::ConfigError(fmt::format(
          "{}: point {} has {}={} there, {} in this sweep: it is another sweep's; remove it, "
          "pick another --out, or leave out --resume",
          path, index, kv.substr(0, kv.find('=')), fields[1 + k], value));
    }
  }
}

}  // namespace

std::set<std::size_t> done_points(const std::string& path, const std::string& head,
                                  const std::vector<std::vector<std::string>>& points,
                                  const std::string& id) {
  const std::size_t columns = column_count(points.front());
  std::set<std::size_t> done;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) {
    return done;
  }
  std::uintmax_t complete = line.size() + 1;  // bytes up to the end of the last whole line
  if (line != head) {
    throw config::ConfigError(
        fmt::format("{}: not a CSV of this sweep (its header differs); remove it "
                    "or leave out --resume",
                    path));
  }
  while (std::getline(in, line)) {
    if (in.eof()) {  // no newline: the cut last row of a killed sweep; it is rerun
      break;
    }
    complete += line.size() + 1;
    const std::vector<std::string> f = split_csv(line);
    double index = 0;
    if (f.size() == columns && parse_number(f[0], index) && index >= 0 &&
        index == std::floor(index)) {
      check_row(path, f, static_cast<std::size_t>(index), points);
      if (f.back() != id) {
        throw config::ConfigError(fmt::format(
            "{}: its rows are of another sweep (sweep_id {} there, {} here): the experiment, "
            "its --set and --unset, or the points differ from those that wrote them; remove "
            "it, pick another --out, or leave out --resume",
            path, config::echo(f.back(), 20), id));
      }
      done.insert(static_cast<std::size_t>(index));
    }
  }
  in.close();
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) > complete && !ec) {
    std::filesystem::resize_file(path, complete, ec);
  }
  return done;
}

void for_each_row(const std::string& path,
                  const std::function<void(const std::vector<std::string>&)>& each) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    if (!line.empty()) {
      each(split_csv(line));
    }
  }
}

}  // namespace hopsim::tools::sweep
