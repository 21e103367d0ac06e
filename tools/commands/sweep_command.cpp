// `hopsim sweep`: points from --vary, each loaded and checked like `hopsim run`, simulated by
// work::run() on a pool of threads, a CSV row written and flushed as each one ends.
#include "tools/commands/sweep_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/commands/csv.hpp"
#include "tools/config/experiment.hpp"
#include "tools/config/json_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {
namespace {

using config::ConfigError;

constexpr std::size_t kMaxValues = 1000;
constexpr std::size_t kMaxPoints = 1000000;

// One axis of the sweep: a --vary key and its values, or the points of a --grid file (several
// keys, a value each per point).
struct Dimension {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;  ///< per value: one per key
};

// A --vary KEY=... parsed.
struct Vary {
  std::string key;
  std::vector<std::string> values;
};

// A whole string as a number, or nothing.
bool parse_number(const std::string& s, double& out) {
  if (s.empty()) {
    return false;
  }
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno == 0 && std::isfinite(out);
}

// START:STOP:FACTOR as the values START, START x FACTOR, ... up to STOP; integers when START and
// FACTOR are.
bool parse_range(const std::string& arg, const std::string& text, std::vector<std::string>& out) {
  const std::size_t a = text.find(':');
  const std::size_t b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos || text.find(':', b + 1) != std::string::npos) {
    return false;
  }
  double start = 0;
  double stop = 0;
  double factor = 0;
  if (!parse_number(text.substr(0, a), start) || !parse_number(text.substr(a + 1, b - a - 1), stop) ||
      !parse_number(text.substr(b + 1), factor)) {
    return false;
  }
  if (!(start > 0) || !(factor > 1) || stop < start) {
    throw ConfigError(fmt::format("--vary {}: a range START:STOP:FACTOR needs START > 0, "
                                  "FACTOR > 1 and STOP >= START",
                                  config::echo(arg)));
  }
  const bool integers = start == std::floor(start) && factor == std::floor(factor) &&
                        stop < 9e15;
  for (double v = start; v <= stop * (1 + 1e-12); v *= factor) {
    if (out.size() == kMaxValues) {
      throw ConfigError(
          fmt::format("--vary {}: more than {} values", config::echo(arg), kMaxValues));
    }
    out.push_back(integers ? fmt::format("{}", static_cast<std::int64_t>(std::llround(v)))
                           : fmt::format("{:g}", v));
  }
  return true;
}

Vary parse_vary(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(fmt::format("--vary {}: expected KEY=V1,V2,... or KEY=START:STOP:FACTOR",
                                  config::echo(arg)));
  }
  Vary v{arg.substr(0, eq), {}};
  const std::string text = arg.substr(eq + 1);
  if (parse_range(arg, text, v.values)) {
    return v;
  }
  std::size_t from = 0;
  while (true) {
    const std::size_t comma = text.find(',', from);
    v.values.push_back(text.substr(from, comma == std::string::npos ? comma : comma - from));
    if (v.values.back().empty()) {
      throw ConfigError(fmt::format("--vary {}: an empty value", config::echo(arg)));
    }
    if (v.values.size() > kMaxValues) {
      throw ConfigError(
          fmt::format("--vary {}: more than {} values", config::echo(arg), kMaxValues));
    }
    if (comma == std::string::npos) {
      break;
    }
    from = comma + 1;
  }
  return v;
}

const char* const kColumns[] = {"step_time_s", "compute_s",          "comm_s",
                                "exposed_comm_s", "compute_comm_ratio", "bytes_ib",
                                "bytes_nvlink",   "imbalance",          "wall_s",
                                "status",         "error"};

// The header of a sweep whose points set `keys` (KEY=VALUE, as every point has them).
std::string header(const std::vector<std::string>& keys) {
  std::string h = "point";
  for (const std::string& kv : keys) {
    h += "," + csv_field(kv.substr(0, kv.find('=')));
  }
  for (const char* c : kColumns) {
    h += std::string(",") + c;
  }
  return h;
}

// The figures of a run: its last case (a collective's largest size), the busiest rank.
std::vector<std::string> figures(const work::RunResult& r) {
  const work::CaseResult& c = r.cases.back();
  const work::Summary& s = c.summary;
  const work::RankTime& busiest = s.ranks[static_cast<std::size_t>(s.critical_rank)];
  double imbalance = 0;
  if (c.ep) {
    imbalance = work::max_over_mean(c.ep->tokens_per_rank);
  } else if (c.cp && !c.cp->flops_per_rank.empty()) {
    const auto [lo, hi] =
        std::minmax_element(c.cp->flops_per_rank.begin(), c.cp->flops_per_rank.end());
    imbalance = *lo > 0 ? *hi / *lo : 0.0;
  } else if (s.mean_busy_s > 0) {
    imbalance = busiest.busy.seconds() / s.mean_busy_s;
  }
  const double comm = busiest.comm.seconds();
  return {fmt::format("{:.9g}", s.step.seconds()),
          fmt::format("{:.9g}", busiest.compute.seconds()),
          fmt::format("{:.9g}", comm),
          fmt::format("{:.9g}", busiest.exposed.seconds()),
          comm > 0 ? fmt::format("{:.6g}", busiest.compute.seconds() / comm) : std::string(),
          fmt::format("{}", s.ib_bytes.n),
          fmt::format("{}", s.nvlink_bytes.n),
          fmt::format("{:.6g}", imbalance)};
}

// One point: its row's fields after the varied values, and whether it failed at run time.
struct Outcome {
  std::vector<std::string> fields;
  bool error = false;
};

Outcome run_point(const SweepOptions& o, const std::vector<std::string>& point) {
  const auto started = std::chrono::steady_clock::now();
  const auto row = [&](std::vector<std::string> figs, const char* status, std::string error) {
    figs.resize(8);
    figs.push_back(fmt::format(
        "{:.3f}", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
    figs.emplace_back(status);
    figs.push_back(std::move(error));
    return figs;
  };
  std::vector<std::string> sets = o.overrides;
  sets.insert(sets.end(), point.begin(), point.end());
  std::optional<config::ExperimentFile> file;
  try {
    file.emplace(config::load_experiment(o.experiment, sets));
  } catch (const ConfigError& e) {
    return {row({}, "invalid", e.what()), false};
  }
  try {
    work::RunOptions options;
    options.watch_links = 0;  // a row has no link loads
    options.probe_threads = 1;  // the points already run on a pool of threads
    const work::RunResult result = work::run(file->experiment, options);
    if (!result.ok()) {
      try {
        file->fail(result.problems.front());
      } catch (const ConfigError& e) {
        return {row({}, "invalid", e.what()), false};
      }
    }
    if (const std::size_t stuck = result.stuck(); stuck > 0) {
      return {row({}, "error", fmt::format("{} tasks never ran (a dependency cycle)", stuck)),
              true};
    }
    return {row(figures(result), "ok", ""), false};
  } catch (const std::exception& e) {
    return {row({}, "error", e.what()), true};
  }
}

// The points an --out file of this sweep already has rows for.
std::set<std::size_t> done_points(const std::string& path, const std::string& head,
                                  std::size_t columns) {
  std::set<std::size_t> done;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) {
    return done;
  }
  std::uintmax_t complete = line.size() + 1;  // bytes up to the end of the last whole line
  if (line != head) {
    throw ConfigError(fmt::format("{}: not a CSV of this sweep (its header differs); remove it "
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
    if (f.size() == columns && parse_number(f[0], index)) {
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

void parse_shard(const std::string& shard, std::size_t& index, std::size_t& count) {
  double i = 0;
  double n = 0;
  const std::size_t slash = shard.find('/');
  if (slash == std::string::npos || !parse_number(shard.substr(0, slash), i) ||
      !parse_number(shard.substr(slash + 1), n) || n < 1 || i < 1 || i > n || i != std::floor(i) ||
      n != std::floor(n) || n > 1e6) {
    throw ConfigError(fmt::format("--shard {}: expected I/N with 1 <= I <= N", shard));
  }
  index = static_cast<std::size_t>(i) - 1;
  count = static_cast<std::size_t>(n);
}

Dimension dimension_of(const Vary& v) {
  Dimension d{{v.key}, {}};
  for (const std::string& value : v.values) {
    d.values.push_back({value});
  }
  return d;
}

// A --grid file: a JSON array of points, each an object of the same dotted keys and their
// values (as --set takes them; strings bare in the CSV).
Dimension read_grid(const std::string& path) {
  const nlohmann::json grid = config::read_json_file(path);
  if (!grid.is_array() || grid.empty()) {
    throw ConfigError(fmt::format("{}: a grid is a JSON array of points, each an object of "
                                  "KEY: VALUE (dotted keys, as --set takes them)",
                                  path));
  }
  if (grid.size() > kMaxPoints) {
    throw ConfigError(fmt::format("{}: more than {} points", path, kMaxPoints));
  }
  Dimension d;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const nlohmann::json& point = grid[i];
    if (!point.is_object() || point.empty()) {
      throw ConfigError(fmt::format("{}: /{}: expected an object of KEY: VALUE", path, i));
    }
    std::vector<std::string> keys;
    std::vector<std::string> values;
    for (const auto& [key, value] : point.items()) {
      if (key.empty()) {
        throw ConfigError(fmt::format("{}: /{}: an empty key", path, i));
      }
      keys.push_back(key);
      values.push_back(value.is_string() ? value.get<std::string>() : value.dump());
    }
    if (i == 0) {
      d.keys = keys;
    } else if (keys != d.keys) {
      throw ConfigError(fmt::format("{}: /{}: the keys differ from point 0's ({}); every point "
                                    "of a grid sets the same keys",
                                    path, i, fmt::join(d.keys, ", ")));
    }
    d.values.push_back(std::move(values));
  }
  return d;
}

// Progress on stderr: on a terminal a bar redrawn in place after every point, else a line.
void progress(std::size_t done, std::size_t total, double elapsed, bool terminal) {
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const std::string left =
      rate > 0 ? fmt::format("about {:.0f} s left", static_cast<double>(total - done) / rate)
               : std::string("time left unknown");
  if (!terminal) {
    fmt::print(stderr, "sweep: {}/{} points, {:.2f} points/s, {}\n", done, total, rate, left);
    return;
  }
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = total > 0 ? done * kWidth / total : kWidth;
  fmt::print(stderr, "\rsweep [{}{}] {}/{} points, {:.2f} points/s, {}   ",
             std::string(filled, '#'), std::string(kWidth - filled, ' '), done, total, rate,
             left);
  std::fflush(stderr);
}

// The cartesian product of the dimensions' values, the last dimension varying fastest; each
// point as KEY=VALUE overrides.
std::vector<std::vector<std::string>> points_of(const std::vector<Dimension>& dims) {
  std::size_t total = 1;
  std::set<std::string> keys;
  for (const Dimension& d : dims) {
    total *= d.values.size();
    if (total > kMaxPoints) {
      throw ConfigError(fmt::format("--vary: more than {} points", kMaxPoints));
    }
    for (const std::string& k : d.keys) {
      if (!keys.insert(k).second) {
        throw ConfigError(fmt::format("{} is varied twice (by --vary or --grid)", k));
      }
    }
  }
  std::vector<std::vector<std::string>> points;
  for (std::size_t p = 0; p < total; ++p) {
    std::vector<std::vector<std::string>> parts(dims.size());
    std::size_t rest = p;
    for (std::size_t k = dims.size(); k-- > 0;) {
      const std::size_t n = dims[k].values.size();
      const std::vector<std::string>& value = dims[k].values[rest % n];
      for (std::size_t j = 0; j < dims[k].keys.size(); ++j) {
        parts[k].push_back(dims[k].keys[j] + "=" + value[j]);
      }
      rest /= n;
    }
    std::vector<std::string> point;
    for (const auto& part : parts) {
      point.insert(point.end(), part.begin(), part.end());
    }
    points.push_back(std::move(point));
  }
  return points;
}

}  // namespace

std::vector<std::vector<std::string>> sweep_points(const std::vector<std::string>& args,
                                                   const std::string& grid) {
  std::vector<Dimension> dims;
  if (!grid.empty()) {
    dims.push_back(read_grid(grid));
  }
  for (const std::string& a : args) {
    dims.push_back(dimension_of(parse_vary(a)));
  }
  return points_of(dims);
}

int sweep_command(const SweepOptions& o) {
  if (o.vary.empty() && o.grid.empty()) {
    throw ConfigError("hopsim sweep needs at least one --vary KEY=V1,V2,... or a --grid FILE");
  }
  if (o.resume && o.out.empty()) {
    throw ConfigError("--resume needs --out FILE (the rows to resume from)");
  }
  if (o.jobs < 1 || o.jobs > 256) {
    throw ConfigError(fmt::format("--jobs {}: expected 1 to 256", o.jobs));
  }
  const std::vector<std::vector<std::string>> points = sweep_points(o.vary, o.grid);
  std::size_t shard = 0;
  std::size_t shards = 1;
  if (!o.shard.empty()) {
    parse_shard(o.shard, shard, shards);
  }
  // The experiment itself must load (a point's own keys may still be invalid).
  (void)config::load_experiment(o.experiment, o.overrides);
  const std::string head = header(points.front());
  const std::size_t columns = 1 + points.front().size() + std::size(kColumns);
  const std::set<std::size_t> done =
      o.resume ? done_points(o.out, head, columns) : std::set<std::size_t>{};
  std::vector<std::size_t> todo;
  for (std::size_t p = shard; p < points.size(); p += shards) {
    if (done.count(p) == 0) {
      todo.push_back(p);
    }
  }
  std::FILE* out = stdout;
  if (!o.out.empty()) {
    const bool fresh = !o.resume || done.empty();
    out = std::fopen(o.out.c_str(), fresh ? "w" : "a");
    if (out == nullptr) {
      throw ConfigError(fmt::format("{}: cannot open: {}", o.out, std::strerror(errno)));
    }
    if (fresh) {
      std::fputs((head + "\n").c_str(), out);
    }
  } else {
    std::fputs((head + "\n").c_str(), out);
  }
  std::fflush(out);

  std::mutex lock;
  std::atomic<std::size_t> next{0};
  std::size_t finished = 0;
  std::size_t errors = 0;
  std::size_t invalid = 0;
  bool write_failed = false;
  const auto started = std::chrono::steady_clock::now();
  auto last_progress = started;
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const auto work = [&] {
    for (std::size_t i = next++; i < todo.size(); i = next++) {
      const std::size_t p = todo[i];
      const Outcome result = run_point(o, points[p]);
      std::string line = fmt::format("{}", p);
      for (const std::string& kv : points[p]) {
        line += "," + csv_field(kv.substr(kv.find('=') + 1));
      }
      for (const std::string& f : result.fields) {
        line += "," + csv_field(f);
      }
      line += "\n";
      const std::lock_guard<std::mutex> guard(lock);
      // One write and a flush per row: a killed sweep leaves whole rows (or a cut last line,
      // which --resume reruns).
      if (std::fputs(line.c_str(), out) == EOF || std::fflush(out) != 0) {
        write_failed = true;
      }
      ++finished;
      errors += result.error ? 1U : 0U;
      invalid += result.fields[9] == "invalid" ? 1U : 0U;
      const auto now = std::chrono::steady_clock::now();
      if (terminal || (now - last_progress > std::chrono::seconds(2) && finished < todo.size())) {
        last_progress = now;
        const double elapsed = std::chrono::duration<double>(now - started).count();
        progress(finished, todo.size(), elapsed, terminal);
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < std::min(o.jobs, todo.size()); ++t) {
    threads.emplace_back(work);
  }
  work();
  for (std::thread& t : threads) {
    t.join();
  }
  if (out != stdout && std::fclose(out) != 0) {
    write_failed = true;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (terminal && finished > 0) {
    fmt::print(stderr, "\n");  // past the bar
  }
  fmt::print(stderr, "sweep: {} point(s) in {:.1f} s: {} ok, {} invalid, {} error(s){}{}\n",
             finished, elapsed, finished - invalid - errors, invalid, errors,
             done.empty() ? "" : fmt::format("; {} already in {}", done.size(), o.out),
             shards > 1 ? fmt::format("; shard {}/{} of {} points", shard + 1, shards, points.size())
                        : "");
  if (write_failed) {
    fmt::print(stderr, "{}: cannot write the rows: {}\n", o.out.empty() ? "stdout" : o.out,
               std::strerror(errno));
    return 1;
  }
  return errors > 0 ? 1 : 0;
}

}  // namespace hopsim::tools
