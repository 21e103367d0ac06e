// Kineto traces: parsed with a callback that keeps each kernel event's few fields and drops the
// event, so that a trace of millions of CPU and runtime events costs its text, not a tree.
#include "tools/profile/kineto_trace.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"
#include "tools/profile/gzip_text.hpp"

namespace hopsim::profile {
namespace {

using Json = nlohmann::json;
using config::ConfigError;

// Where the parser is: the top level an array of events or an object with traceEvents.
struct Cursor {
  bool top_is_array = false;
  std::string top_key;     ///< the top-level object's current key
  bool in_events = false;  ///< inside the traceEvents array
  std::size_t index = 0;   ///< of the next event
};

std::optional<std::int64_t> integer(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it != j.end() && it->is_number_integer()) {
    return it->get<std::int64_t>();
  }
  return std::nullopt;
}

// The largest time a kernel event may give, in microseconds: a start ("ts", from the epoch or
// the trace's own origin) before the year 5000, a duration ("dur") within a day.
constexpr double kMaxStartUs = 1e17;
constexpr double kMaxDurationUs = 86400e6;

// A number at `key` from 0 to `max`, or a ConfigError at the event's key.
double time_field(const Json& e, const char* key, double max, const std::string& at) {
  const auto it = e.find(key);
  const double v = it != e.end() && it->is_number() ? it->get<double>() : -1;
  if (!(v >= 0 && v <= max)) {
    throw ConfigError(fmt::format(
        "{}/{}: a kernel event needs \"{}\" as a number of "
        "microseconds, from 0 to {:g}{}",
        at, key, key, max,
        it != e.end() && it->is_number() ? fmt::format(", got {:g}", v) : std::string()));
  }
  return v;
}

// A CPU operator's input shapes, kept when it has an External id and Input Dims (an input that
// is not one tensor keeps no dimensions); shapes are optional, so odd ones are left out.
void take_op(const Json& e, KinetoTrace& out) {
  const auto args = e.find("args");
  const auto name = e.find("name");
  if (args == e.end() || !args->is_object() || name == e.end() || !name->is_string()) {
    return;
  }
  const std::optional<std::int64_t> id = integer(*args, "External id");
  const auto dims = args->find("Input Dims");
  if (!id || dims == args->end() || !dims->is_array()) {
    return;
  }
  CpuOp op;
  op.name = name->get<std::string>();
  for (const Json& input : *dims) {
    std::vector<std::int64_t> d;
    const bool tensor =
        input.is_array() && std::all_of(input.begin(), input.end(), [](const Json& x) {
          return x.is_number_integer() && x.get<std::int64_t>() >= 0;
        });
    if (tensor) {
      for (const Json& x : input) {
        d.push_back(x.get<std::int64_t>());
      }
    }
    op.dims.push_back(std::move(d));
  }
  const auto types = args->find("Input type");
  if (types != args->end() && types->is_array()) {
    for (const Json& t : *types) {
      op.types.push_back(t.is_string() ? t.get<std::string>() : std::string());
    }
  }
  out.ops[*id] = std::move(op);
}

void take_event(const Json& e, const std::string& at, KinetoTrace& out,
                std::set<std::string>& steps) {
  const auto cat = e.find("cat");
  const auto name = e.find("name");
  if (cat == e.end() || !cat->is_string()) {
    return;  // metadata events ("ph": "M") and flow arrows have no category
  }
  if (name != e.end() && name->is_string() &&
      name->get_ref<const std::string&>().starts_with("ProfilerStep#")) {
    steps.insert(name->get<std::string>());
  }
  if (cat->get_ref<const std::string&>() == "cpu_op") {
    take_op(e, out);
    return;
  }
  if (cat->get_ref<const std::string&>() != "kernel") {
    return;
  }
  if (name == e.end() || !name->is_string()) {
    throw ConfigError(fmt::format("{}/name: a kernel event needs its name as a string", at));
  }
  KernelEvent k;
  k.name = name->get<std::string>();
  k.start_us = time_field(e, "ts", kMaxStartUs, at);
  k.duration_us = time_field(e, "dur", kMaxDurationUs, at);
  const auto args = e.find("args");
  const bool has_args = args != e.end() && args->is_object();
  k.device =
      (has_args ? integer(*args, "device") : std::nullopt).value_or(integer(e, "pid").value_or(0));
  k.stream =
      (has_args ? integer(*args, "stream") : std::nullopt).value_or(integer(e, "tid").value_or(0));
  k.external_id = has_args ? integer(*args, "External id") : std::nullopt;
  out.kernels.push_back(std::move(k));
}

// Line and column (from 1) of byte `offset`.
std::string place(const std::string& text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t start = 0;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return fmt::format("line {}, column {}", line, offset - start + 1);
}

// The parse, each event handed to take_event and dropped; what is left is the top level.
Json parse_events(const std::string& text, const std::string& where, KinetoTrace& out) {
  Cursor c;
  std::set<std::string> steps;
  const auto callback = [&](int depth, Json::parse_event_t ev, Json& value) {
    using E = Json::parse_event_t;
    if (depth == 0 && ev == E::array_start) {
      c.top_is_array = true;
      c.in_events = true;
    } else if (depth == 1 && ev == E::key && !c.top_is_array) {
      c.top_key = value.get<std::string>();
    } else if (depth == 1 && ev == E::array_start && c.top_key == "traceEvents") {
      c.in_events = true;
    } else if (depth == 1 && ev == E::array_end && !c.top_is_array) {
      c.in_events = false;
    }
    const int element = c.top_is_array ? 1 : 2;
    if (!c.in_events || depth != element ||
        (ev != E::object_end && ev != E::value && ev != E::array_end)) {
      return true;
    }
    const std::string at =
        fmt::format("{}: {}/{}", where, c.top_is_array ? "" : "/traceEvents", c.index++);
    if (ev != E::object_end) {
      throw ConfigError(fmt::format("{}: an event that is not an object", at));
    }
    take_event(value, at, out, steps);
    return false;
  };
  try {
    Json top = Json::parse(text, callback);
    out.profiler_steps = static_cast<std::int64_t>(steps.size());
    return top;
  } catch (const Json::parse_error& e) {
    const std::string what = e.what();
    const std::size_t colon = what.find(": ");
    throw ConfigError(fmt::format("{}: invalid JSON at {}: {}", where,
                                  place(text, e.byte > 0 ? e.byte - 1 : 0),
                                  colon == std::string::npos ? what : what.substr(colon + 2)));
  } catch (const Json::exception& e) {
    throw ConfigError(fmt::format("{}: invalid JSON: {}", where, e.what()));
  }
}

}  // namespace

KinetoTrace parse_kineto_trace(const std::string& text, const std::string& where) {
  config::check_json_structure(text, where);
  KinetoTrace out;
  const Json top = parse_events(text, where, out);
  if (!top.is_array() &&
      !(top.is_object() && top.contains("traceEvents") && top["traceEvents"].is_array())) {
    throw ConfigError(
        fmt::format("{}: not a PyTorch profiler trace (no \"traceEvents\" array)", where));
  }
  if (out.kernels.empty()) {
    throw ConfigError(
        fmt::format("{}: no GPU kernels (events of category \"kernel\"); profile "
                    "with ProfilerActivity.CUDA",
                    where));
  }
  if (top.is_object()) {
    const Json& devices = top.value("deviceProperties", Json::array());
    if (devices.is_array() && !devices.empty() && devices[0].is_object() &&
        devices[0].contains("name") && devices[0]["name"].is_string()) {
      out.gpu = devices[0]["name"].get<std::string>();
    }
    if (devices.is_array() && !devices.empty() && devices[0].is_object()) {
      out.sm_count = integer(devices[0], "numSms");
      out.hbm_bytes = integer(devices[0], "totalGlobalMem");
    }
    const Json& dist = top.value("distributedInfo", Json::object());
    if (dist.is_object()) {
      out.rank = integer(dist, "rank");
      out.world_size = integer(dist, "world_size");
    }
  }
  return out;
}

KinetoTrace read_kineto_trace(const std::string& path) {
  return parse_kineto_trace(read_maybe_gzip(path, kMaxTraceBytes), path);
}

}  // namespace hopsim::profile
