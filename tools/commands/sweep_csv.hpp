// The CSV of `hopsim sweep`: its header, a point's row, and the points an existing CSV already
// has rows for (--resume).
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace hopsim::work {
struct RunResult;
}  // namespace hopsim::work

namespace hopsim::tools::sweep {

/// Where a row's status ("ok", "invalid" or "error") is among the fields after its values.
constexpr std::size_t kStatusField = 14;

/// The header of a sweep whose points set `point`'s keys (KEY=VALUE, as every point has them).
std::string header(const std::vector<std::string>& point);

/// The fields of each row of that sweep: the point's index, its values, the figures.
std::size_t column_count(const std::vector<std::string>& point);

/// The figures of a run: its last case (a collective's largest size), the busiest rank.
std::vector<std::string> figures(const work::RunResult& r);

/// A row's fields after the point's values: `figs` (empty for a point that did not run: blank
/// figures), the seconds the point took, its status and its error.
std::vector<std::string> row_fields(std::vector<std::string> figs, double wall_s,
                                    const char* status, std::string error);

/// The name of the last column: the sweep a row belongs to (sweep_id()).
inline constexpr const char* kSweepIdColumn = "sweep_id";

/// What identifies a sweep, 16 hex digits: a hash (FNV-1a, 64 bits) of `experiment`, the
/// experiment's resolved document after the sweep's --set and --unset (with its cluster and
/// model inlined), and of every point's KEY=VALUE overrides. Shards of one sweep share it;
/// another experiment, other --sets or other points give another.
std::string sweep_id(const std::string& experiment,
                     const std::vector<std::vector<std::string>>& points);

/// The line of point `index`: the index, the point's values, `fields`, then `id` (sweep_id),
/// quoted as they need.
std::string row(std::size_t index, const std::vector<std::string>& point,
                const std::vector<std::string>& fields, const std::string& id);

/// The points the CSV at `path` already has whole rows for (none when it is empty or absent),
/// its cut last line removed to be rerun. Throws config::ConfigError when its header is not
/// `head`, a row's values are not those of its point in `points`, or a row is of a sweep other
/// than `id` (another experiment, other --sets: another sweep's file).
std::set<std::size_t> done_points(const std::string& path, const std::string& head,
                                  const std::vector<std::vector<std::string>>& points,
                                  const std::string& id);

/// Calls `each` with every row of the CSV at `path` after its header, split into fields.
void for_each_row(const std::string& path,
                  const std::function<void(const std::vector<std::string>&)>& each);

}  // namespace hopsim::tools::sweep
