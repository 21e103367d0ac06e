// `hopsim sweep`: points from --vary, each loaded and checked like `hopsim run`, simulated by
// work::run() on a pool of threads, a CSV row written and flushed as each one ends.
#include "tools/commands/sweep_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/commands/command.hpp"
#include "tools/commands/csv.hpp"
#include "tools/commands/idle_perturbations.hpp"
#include "tools/commands/output_file.hpp"
#include "tools/commands/run_command.hpp"
#include "tools/commands/sweep_best.hpp"
#include "tools/commands/sweep_csv.hpp"
#include "tools/commands/sweep_points.hpp"
#include "tools/config/experiment_file.hpp"
#include "tools/config/json_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {
namespace {

using config::ConfigError;
using Clock = std::chrono::steady_clock;

// The seconds from `from` until now.
double seconds_since(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

// One point: its row's fields after the varied values, whether it failed at run time, and its
// perturbations that change nothing (idle_perturbations, as run warns of them).
struct Outcome {
  std::vector<std::string> fields;
  bool error = false;
  std::vector<std::string> idle;
};

// One point loaded and checked like `hopsim run`, then simulated on this thread. A point the
// config rejects is an "invalid" row, not a failure.
Outcome run_point(const SweepOptions& o, const std::vector<std::string>& point) {
  const auto started = Clock::now();
  const auto row = [&](std::vector<std::string> figs, const char* status, std::string error) {
    return sweep::row_fields(std::move(figs), seconds_since(started), status, std::move(error));
  };
  std::vector<std::string> sets = o.overrides;
  sets.insert(sets.end(), point.begin(), point.end());
  std::optional<config::ExperimentFile> file;
  try {
    file.emplace(config::load_experiment(o.experiment, sets));
  } catch (const ConfigError& e) {
    return {row({}, "invalid", e.what()), false, {}};
  }
  try {
    work::RunOptions options;
    options.watch_links = 0;  // a row has no link loads
    options.probe_threads = 1;  // the points already run on a pool of threads
    set_memory_limit(options, "", false);  // each point's plan, against the default
    const work::RunResult result = work::run(file->experiment, options);
    if (!result.ok()) {
      try {
        file->fail(result.problems.front());
      } catch (const ConfigError& e) {
        return {row({}, "invalid", e.what()), false, {}};
      }
    }
    if (const std::size_t stuck = result.stuck(); stuck > 0) {
      return {row({}, "error", fmt::format("{} tasks never ran (a dependency cycle)", stuck)),
              true, {}};
    }
    return {row(sweep::figures(result), "ok", ""), false, idle_perturbations(*file, &result)};
  } catch (const std::exception& e) {
    return {row({}, "error", e.what()), true, {}};
  }
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

// The signal that stopped the sweep (SIGINT, SIGTERM), or 0: the points under way finish and
// are written, no new one starts. Lock-free, so the handler may set it and threads read it.
std::atomic<int> g_stop{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int signal) {
  g_stop = signal;
  std::signal(signal, SIG_DFL);  // a second one stops at once
}

// SIGINT and SIGTERM stop the sweep between points while it runs; the handlers before are
// restored after.
class StopSignals {
 public:
  StopSignals()
      : int_(std::signal(SIGINT, on_stop_signal)), term_(std::signal(SIGTERM, on_stop_signal)) {
    g_stop = 0;
  }
  ~StopSignals() {
    std::signal(SIGINT, int_);
    std::signal(SIGTERM, term_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void (*int_)(int);
  void (*term_)(int);
};

// The command line's own mistakes, found before any file is read.
void check_options(const SweepOptions& o) {
  if (o.vary.empty() && o.grid.empty()) {
    throw ConfigError("hopsim sweep needs at least one --vary KEY=V1,V2,... or a --grid FILE");
  }
  if (o.resume && o.out.empty()) {
    throw ConfigError("--resume needs --out FILE (the rows to resume from)");
  }
  if (o.jobs < 1 || o.jobs > 256) {
    throw ConfigError(fmt::format("--jobs {}: expected 1 to 256", o.jobs));
  }
  const std::vector<std::string> metrics = sweep::rank_metrics();
  if (!o.rank_by.empty() &&
      std::find(metrics.begin(), metrics.end(), o.rank_by) == metrics.end()) {
    throw ConfigError(fmt::format("--rank-by {}: not a figure of a sweep's rows; one of {}",
                                  config::echo(o.rank_by, 40), fmt::join(metrics, ", ")));
  }
}

// A varied key the experiment has no place for (a typo, an index past an array) fails the
// sweep before any point runs: each key is set alone to its first value, and an error that
// names that --set and the key's place, not its value, is the sweep's own.
void check_keys(const SweepOptions& o, const std::vector<std::string>& first) {
  for (const std::string& kv : first) {
    std::vector<std::string> sets = o.overrides;
    sets.push_back(kv);
    try {
      (void)config::load_experiment(o.experiment, sets);
    } catch (const ConfigError& e) {
      const std::string message = e.what();
      const std::string key = kv.substr(0, kv.find('='));
      const bool ours = message.rfind("--set " + key + "=", 0) == 0;
      const bool place = message.find("unknown key") != std::string::npos ||
                         message.find("is not an index") != std::string::npos ||
                         message.find("is inside a") != std::string::npos ||
                         message.find("empty key segment") != std::string::npos;
      if (ours && place) {
        throw ConfigError(fmt::format("--vary {}: the experiment has no such key: {}", key,
                                      message));
      }
    }
  }
}

// The points this run takes, by index: its shard's, less those a resumed --out has rows for.
std::vector<std::size_t> todo_points(std::size_t total, sweep::Shard shard,
                                     const std::set<std::size_t>& done) {
  std::vector<std::size_t> todo;
  for (std::size_t p = shard.index; p < total; p += shard.count) {
    if (done.count(p) == 0) {
      todo.push_back(p);
    }
  }
  return todo;
}

// Where the rows go, after the header unless they follow a resumed file's rows: --out (written
// afresh or appended to), else standard output (never resumed: --resume needs --out).
std::FILE* open_out(const SweepOptions& o, const std::string& head, bool fresh) {
  std::FILE* out = o.out.empty() ? stdout : std::fopen(o.out.c_str(), fresh ? "w" : "a");
  if (out == nullptr) {
    throw ConfigError(fmt::format("{}: cannot open: {}", o.out, std::strerror(errno)));
  }
  if ((fresh && std::fputs((head + "\n").c_str(), out) == EOF) || std::fflush(out) != 0) {
    const std::string why = std::strerror(errno);
    if (out != stdout) {
      std::fclose(out);
    }
    throw OutputError(fmt::format("{}: cannot write the rows: {}",
                                  o.out.empty() ? "stdout" : o.out, why));
  }
  return out;
}

// What the points of a run came to: rows written, points invalid and failed at run time,
// whether a row (or the file's close) failed, and the seconds it all took.
struct Tally {
  std::size_t finished = 0;
  std::size_t errors = 0;
  std::size_t invalid = 0;
  std::string first_invalid;  // "point P: why", of the first invalid row written
  bool write_failed = false;
  int write_errno = 0;  // the OS's reason of the first failed write
  double elapsed_s = 0;
  std::map<std::string, std::vector<std::size_t>> idle;  // warning -> the points that gave it
};

// Each perturbation that changed nothing, once, with the points where it did not.
void print_idle(const Tally& t) {
  for (auto [warning, points] : t.idle) {
    std::sort(points.begin(), points.end());
    const std::size_t shown = std::min<std::size_t>(points.size(), 5);
    fmt::print(stderr, "sweep: warning: {} (point{} {}{})\n", warning,
               points.size() == 1 ? "" : "s",
               fmt::join(points.begin(), points.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
               points.size() > shown ? fmt::format(" and {} more", points.size() - shown) : "");
  }
}

// The points left to run, on a pool of threads: each thread takes the next point, runs it and
// writes its row; the rows, the counts and the progress go one thread at a time.
class PointPool {
 public:
  PointPool(const SweepOptions& o, const std::vector<std::vector<std::string>>& points,
            std::vector<std::size_t> todo, std::FILE* out, bool terminal,
            const std::string& head, std::string id)
      : o_(o), points_(points), todo_(std::move(todo)), out_(out), terminal_(terminal),
        id_(std::move(id)), best_(split_csv(head), o.rank_by) {}

  /// Runs every point on up to --jobs threads (this one among them), then closes --out.
  Tally run();
  /// The best of the rows run() wrote.
  const sweep::BestPoints& best() const { return best_; }

 private:
  void work();
  void record(std::size_t point, const Outcome& result, const std::string& line);
  void write_failed();

  const SweepOptions& o_;
  const std::vector<std::vector<std::string>>& points_;
  const std::vector<std::size_t> todo_;  // indexes into points_
  std::FILE* const out_;
  const bool terminal_;
  const std::string id_;  // the sweep's, in every row
  const Clock::time_point started_ = Clock::now();
  std::atomic<std::size_t> next_{0};  // into todo_
  std::mutex lock_;                   // over what follows
  Clock::time_point last_progress_ = started_;
  Tally tally_;
  sweep::BestPoints best_;  // of the rows written
};

Tally PointPool::run() {
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < std::min(o_.jobs, todo_.size()); ++t) {
    threads.emplace_back([this] { work(); });
  }
  work();
  for (std::thread& t : threads) {
    t.join();
  }
  if (out_ != stdout && std::fclose(out_) != 0) {
    write_failed();
  }
  tally_.elapsed_s = seconds_since(started_);
  return tally_;
}

// One thread's share: the next point left, until none is.
void PointPool::work() {
  for (std::size_t i = next_++; i < todo_.size() && g_stop == 0; i = next_++) {
    const std::size_t p = todo_[i];
    const Outcome result = run_point(o_, points_[p]);
    record(p, result, sweep::row(p, points_[p], result.fields, id_));
  }
}

// A write or close of the rows failed: the first failure's reason (errno) is kept.
void PointPool::write_failed() {
  if (!tally_.write_failed) {
    tally_.write_errno = errno;
  }
  tally_.write_failed = true;
}

// A point's row written and counted, and the progress shown: after every point on a terminal,
// else every 2 s (but not after the last point).
void PointPool::record(std::size_t point, const Outcome& result, const std::string& line) {
  const std::lock_guard<std::mutex> guard(lock_);
  // One write and a flush per row: a killed sweep leaves whole rows (or a cut last line, which
  // --resume reruns).
  if (std::fputs(line.c_str(), out_) == EOF || std::fflush(out_) != 0) {
    write_failed();
  }
  best_.add(split_csv(line.substr(0, line.find_last_not_of('\n') + 1)));
  ++tally_.finished;
  tally_.errors += result.error ? 1U : 0U;
  for (const std::string& w : result.idle) {
    tally_.idle[w].push_back(point);
  }
  if (result.fields[sweep::kStatusField] == "invalid") {
    ++tally_.invalid;
    if (tally_.first_invalid.empty()) {
      tally_.first_invalid =
          fmt::format("point {}: {}", point, result.fields[sweep::kStatusField + 1]);
    }
  }
  const auto now = Clock::now();
  if (terminal_ ||
      (now - last_progress_ > std::chrono::seconds(2) && tally_.finished < todo_.size())) {
    last_progress_ = now;
    const double elapsed = std::chrono::duration<double>(now - started_).count();
    progress(tally_.finished, todo_.size(), elapsed, terminal_);
  }
}

// The sweep's best points and GPU-count warning, over every row of --out (resumed ones too),
// else over the rows this run wrote.
void report_best(const SweepOptions& o, const std::string& head,
                 const sweep::BestPoints& written) {
  if (o.out.empty()) {
    fmt::print(stderr, "{}", written.text());
    return;
  }
  sweep::BestPoints all(split_csv(head), o.rank_by);
  sweep::for_each_row(o.out, [&](const std::vector<std::string>& row) { all.add(row); });
  fmt::print(stderr, "{}", all.text());
}

// What an interrupted sweep says: where its rows are and how to go on.
void stopped(const SweepOptions& o, std::size_t finished) {
  const char* what = g_stop == SIGTERM ? "SIGTERM" : "SIGINT";
  if (o.out.empty()) {
    fmt::print(stderr,
               "sweep: stopped by {} after {} point(s); the rows went to standard output. Run "
               "with --out FILE to be able to resume a sweep\n",
               what, finished);
    return;
  }
  std::string again = o.command_line.empty() ? std::string("the same command") : o.command_line;
  if (!o.resume) {
    again += " --resume";
  }
  fmt::print(stderr, "sweep: stopped by {} after {} point(s); their rows are in {}. Go on with:\n"
                     "  {}\n",
             what, finished, o.out, again);
}

// What a sweep runs, read and checked before any point: its points, its id, and the files it
// read (the experiment's, a --grid), which --out must not be.
struct SweepPlan {
  std::vector<std::vector<std::string>> points;
  std::string id;
};

SweepPlan plan_sweep(const SweepOptions& o) {
  SweepPlan plan;
  std::vector<std::string> inputs;
  {
    const config::InputLog log(inputs);
    plan.points = sweep_points(o.vary, o.grid);
    // The experiment itself must load (a point's own values may still be invalid), and every
    // varied key must be one of its keys.
    const config::ExperimentFile base = config::load_experiment(o.experiment, o.overrides);
    check_keys(o, plan.points.front());
    plan.id = sweep::sweep_id(base.resolved.dump(), plan.points);
  }
  if (!o.out.empty()) {
    refuse_input("--out " + o.out, o.out, inputs, "this sweep");
  }
  return plan;
}

// A sweep that ran nothing, an error a CI job must see rather than a CSV of reasons: every
// point of this run invalid, none failed at run time, and no ok row among those --resume kept.
// Throws the one line that says so (exit 2); the rows are written by then.
void refuse_all_invalid(const SweepOptions& o, const std::string& head, const Tally& t,
                        bool resumed) {
  if (t.invalid == 0 || t.invalid != t.finished || t.write_failed || g_stop != 0) {
    return;
  }
  if (resumed) {
    sweep::BestPoints all(split_csv(head), o.rank_by);
    sweep::for_each_row(o.out, [&](const std::vector<std::string>& row) { all.add(row); });
    if (all.ok_rows() > 0) {
      return;
    }
  }
  throw ConfigError(fmt::format("sweep: every point is invalid ({} of {}), so none ran; {}",
                                t.invalid, t.finished, t.first_invalid));
}

}  // namespace

int sweep_command(const SweepOptions& o) {
  check_options(o);
  const SweepPlan plan = plan_sweep(o);
  const std::vector<std::vector<std::string>>& points = plan.points;
  const sweep::Shard shard = sweep::parse_shard(o.shard);
  const std::string head = sweep::header(points.front());
  const std::set<std::size_t> done =
      o.resume ? sweep::done_points(o.out, head, points, plan.id) : std::set<std::size_t>{};
  std::vector<std::size_t> todo = todo_points(points.size(), shard, done);
  std::FILE* out = open_out(o, head, !o.resume || done.empty());
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const StopSignals signals;
  PointPool pool(o, points, std::move(todo), out, terminal, head, plan.id);
  const Tally t = pool.run();
  if (terminal && t.finished > 0) {
    fmt::print(stderr, "\n");  // past the bar
  }
  refuse_all_invalid(o, head, t, !done.empty());
  fmt::print(stderr, "sweep: {} point(s) in {:.1f} s: {} ok, {} invalid, {} error(s){}{}\n",
             t.finished, t.elapsed_s, t.finished - t.invalid - t.errors, t.invalid, t.errors,
             done.empty() ? "" : fmt::format("; {} already in {}", done.size(), o.out),
             shard.count > 1 ? fmt::format("; shard {}/{} of {} points", shard.index + 1,
                                           shard.count, points.size())
                             : "");
  print_idle(t);
  if (t.write_failed) {
    fmt::print(stderr, "{}: cannot write the rows: {}\n", o.out.empty() ? "stdout" : o.out,
               std::strerror(t.write_errno));
    return 1;
  }
  report_best(o, head, pool.best());
  if (g_stop != 0) {
    stopped(o, t.finished);
    return 130;
  }
  return t.errors > 0 ? 1 : 0;
}

Command declare_sweep_command(CLI::App& program) {
  auto s = std::make_shared<WithUnsets<SweepOptions>>();
  SweepOptions& w = s->options;
  CLI::App* app = program.add_subcommand(
      "sweep", "run an experiment over every combination of varied keys; a CSV row per point");
  app->add_option("experiment", w.experiment, "experiment JSON file")->required();
  app->add_option("--vary", w.vary,
                  "KEY=V1,V2,... or KEY=START:STOP:FACTOR; several --vary multiply");
  app->add_option("--grid", w.grid,
                  "a JSON array of points, each an object of KEY: VALUE; multiplies with --vary");
  app->add_option("--set", w.overrides, "override a config key for every point");
  app->add_option("--unset", s->unset, "remove an optional key for every point");
  app->add_option("--out", w.out,
                  "write the rows to this CSV file, afresh (with --resume: after its rows); "
                  "default: stdout");
  app->add_option("--rank-by", w.rank_by,
                  "the figure the closing lines rank points by (default tokens_per_s_per_gpu "
                  "where the kind has it, else step_time_s)");
  app->add_option("--jobs", w.jobs, "points simulated at once, on threads (default 1)");
  app->add_flag("--resume", w.resume, "skip the points --out already has rows for");
  app->add_option("--shard", w.shard,
                  "I/N: run only every N-th point from the I-th, I from 1 (a job array)");
  return {app, [s](const std::string& command_line) {
            s->options.command_line = command_line;
            return sweep_command(s->resolved());
          }};
}

}  // namespace hopsim::tools
