// Reading and writing Chakra ET files with the protobuf library (length-delimited messages).
#include "tools/chakra/et_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "et_def.pb.h"

namespace hopsim::chakra {
namespace {

namespace fs = std::filesystem;
namespace pb = ::hopsim::chakra;  // the generated messages share the namespace
using Attr = pb::AttributeProto;

constexpr std::int64_t kMaxFileBytes = std::int64_t{4} << 30;  // 4 GiB per rank file
constexpr std::size_t kMaxNodes = 20'000'000;                   // per rank file
constexpr std::int64_t kMaxMicros = 1'000'000'000;               // 1,000 s per node
constexpr std::int64_t kMaxCommBytes = std::int64_t{1} << 50;    // 1 PiB per message
constexpr int kMaxRanks = 1 << 20;

// Attributes that Chakra's PyTorch converter writes for its own bookkeeping; the replay does
// not need them (the parent, sequence and thread ids, the op's schema, a priority).
constexpr std::array<std::string_view, 8> kIgnored{"rf_id",  "fw_parent", "seq_id",  "scope",
                                                   "tid",    "fw_tid",    "op_schema",
                                                   "comm_priority"};
constexpr std::string_view kRead =
    "is_cpu_op, stream, num_ops, tensor_size, comm_type, comm_size, comm_src, comm_dst, "
    "comm_tag, pg_name, involved_dim";

// Where an error is: "FILE: rank R: node ID".
struct At {
  const std::string& file;
  int rank;
  std::optional<std::uint64_t> node;
  [[noreturn]] void fail(std::string_view what) const {
    if (node) {
      throw EtError(fmt::format("{}: rank {}: node {}: {}", file, rank, *node, what));
    }
    throw EtError(fmt::format("{}: rank {}: {}", file, rank, what));
  }
};

// An integer attribute in any of the format's integer encodings.
std::optional<std::int64_t> integer(const Attr& a) {
  switch (a.value_case()) {
    case Attr::kInt32Val: return a.int32_val();
    case Attr::kInt64Val: return a.int64_val();
    case Attr::kUint32Val: return a.uint32_val();
    case Attr::kUint64Val:
      if (a.uint64_val() > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<std::int64_t>(a.uint64_val());
    case Attr::kSint32Val: return a.sint32_val();
    case Attr::kSint64Val: return a.sint64_val();
    case Attr::kFixed32Val: return a.fixed32_val();
    case Attr::kFixed64Val:
      if (a.fixed64_val() > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<std::int64_t>(a.fixed64_val());
    case Attr::kSfixed32Val: return a.sfixed32_val();
    case Attr::kSfixed64Val: return a.sfixed64_val();
    default: return std::nullopt;
  }
}

std::int64_t integer_in(const Attr& a, std::int64_t lo, std::int64_t hi, const At& at) {
  const std::optional<std::int64_t> v = integer(a);
  if (!v) {
    at.fail(fmt::format("attribute \"{}\" must be an integer (one of the int, uint, sint or "
                        "fixed values)", a.name()));
  }
  if (*v < lo || *v > hi) {
    at.fail(fmt::format("attribute \"{}\" is {}; expected {} to {}", a.name(), *v, lo, hi));
  }
  return *v;
}

work::EtCollective collective_of(std::int64_t type, const At& at) {
  using K = work::EtCollective::Kind;
  switch (static_cast<pb::CollectiveCommType>(type)) {
    case pb::ALL_REDUCE: return {K::Op, work::CollectiveOp::AllReduce};
    case pb::ALL_GATHER: return {K::Op, work::CollectiveOp::AllGather};
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK: return {K::Op, work::CollectiveOp::ReduceScatter};
    case pb::ALL_TO_ALL: return {K::Op, work::CollectiveOp::AllToAll};
    case pb::BARRIER: return {K::Barrier};
    case pb::BROADCAST: return {K::Broadcast};
    default: break;
  }
  const std::string_view name =
      pb::CollectiveCommType_IsValid(static_cast<int>(type))
          ? std::string_view(pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(type)))
          : std::string_view("unknown");
  at.fail(fmt::format("comm_type {} ({}) is not a collective hopsim replays (ALL_REDUCE, "
                      "ALL_GATHER, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, ALL_TO_ALL, BARRIER, "
                      "BROADCAST)",
                      type, name));
}

// What the attributes say, checked one by one.
struct Attrs {
  std::optional<std::int64_t> comm_type, comm_size, comm_src, comm_dst;
};

void read_attr(const Attr& a, work::EtNode& n, Attrs& seen, const At& at) {
  const std::string& name = a.name();
  if (name == "is_cpu_op") {
    if (a.value_case() != Attr::kBoolVal) {
      at.fail("attribute \"is_cpu_op\" must be a bool_val");
    }
    n.cpu = a.bool_val();
  } else if (name == "stream") {
    n.stream = integer_in(a, 0, INT64_MAX, at);
  } else if (name == "num_ops") {
    n.flops = static_cast<double>(integer_in(a, 0, INT64_MAX, at));
  } else if (name == "tensor_size") {
    n.tensor_bytes = integer_in(a, 0, INT64_MAX, at);
  } else if (name == "comm_type") {
    seen.comm_type = integer_in(a, 0, std::numeric_limits<int>::max(), at);
  } else if (name == "comm_size") {
    seen.comm_size = integer_in(a, 0, kMaxCommBytes, at);
  } else if (name == "comm_src") {
    seen.comm_src = integer_in(a, 0, kMaxRanks - 1, at);
  } else if (name == "comm_dst") {
    seen.comm_dst = integer_in(a, 0, kMaxRanks - 1, at);
  } else if (name == "comm_tag") {
    n.tag = integer_in(a, INT64_MIN, INT64_MAX, at);
  } else if (name == "pg_name") {
    if (a.value_case() != Attr::kStringVal) {
      at.fail("attribute \"pg_name\" must be a string_val");
    }
    n.group = a.string_val();
  } else if (name == "involved_dim") {
    const bool all = a.value_case() == Attr::kBoolList &&
                     std::all_of(a.bool_list().values().begin(), a.bool_list().values().end(),
                                 [](bool b) { return b; });
    if (!all) {
      at.fail("attribute \"involved_dim\" selects dimensions of ASTRA-sim's logical topology; "
              "hopsim takes a collective's ranks from \"pg_name\" and the experiment's "
              "\"groups\" (all true, or no involved_dim, means every rank)");
    }
  } else if (std::find(kIgnored.begin(), kIgnored.end(), name) == kIgnored.end()) {
    at.fail(fmt::format("unknown attribute \"{}\" (hopsim reads {}; it ignores {})",
                        work::shown(name), kRead, fmt::join(kIgnored, ", ")));
  }
}

std::int64_t required(const std::optional<std::int64_t>& v, std::string_view key,
                      std::string_view type, const At& at) {
  if (!v) {
    at.fail(fmt::format("a {} needs attribute \"{}\"", type, key));
  }
  return *v;
}

work::EtNodeType node_type(const pb::Node& m, const At& at) {
  switch (m.type()) {
    case pb::METADATA_NODE: return work::EtNodeType::Metadata;
    case pb::COMP_NODE: return work::EtNodeType::Compute;
    case pb::COMM_SEND_NODE: return work::EtNodeType::Send;
    case pb::COMM_RECV_NODE: return work::EtNodeType::Recv;
    case pb::COMM_COLL_NODE: return work::EtNodeType::Collective;
    case pb::MEM_LOAD_NODE:
    case pb::MEM_STORE_NODE:
      at.fail(fmt::format("{} is not replayed: hopsim has no model of remote memory",
                          pb::NodeType_Name(m.type())));
    default: break;
  }
  at.fail(fmt::format("node type {} is not one hopsim replays (METADATA_NODE, COMP_NODE, "
                      "COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE)",
                      static_cast<int>(m.type())));
}

work::EtNode convert(const pb::Node& m, const At& at) {
  work::EtNode n;
  n.id = m.id();
  n.name = m.name();
  n.type = node_type(m, at);
  if (m.duration_micros() > static_cast<std::uint64_t>(kMaxMicros)) {
    at.fail(fmt::format("duration_micros is {}; at most {} (1,000 s) per node",
                        m.duration_micros(), kMaxMicros));
  }
  n.duration = Time::us(static_cast<std::int64_t>(m.duration_micros()));
  n.deps.assign(m.data_deps().begin(), m.data_deps().end());
  n.deps.insert(n.deps.end(), m.ctrl_deps().begin(), m.ctrl_deps().end());
  Attrs seen;
  for (const Attr& a : m.attr()) {
    read_attr(a, n, seen, at);
  }
  if (n.cpu && n.type != work::EtNodeType::Metadata) {
    // The host's side of a call (Chakra's converter writes c10d:: operators as communication
    // nodes with is_cpu_op): its time on the host; the GPU's node is the communication.
    n.type = work::EtNodeType::Compute;
    return n;
  }
  switch (n.type) {
    case work::EtNodeType::Collective:
      n.collective =
          collective_of(required(seen.comm_type, "comm_type", "COMM_COLL_NODE", at), at);
      n.comm_bytes = required(seen.comm_size, "comm_size", "COMM_COLL_NODE", at);
      break;
    case work::EtNodeType::Send:
      n.peer = static_cast<int>(required(seen.comm_dst, "comm_dst", "COMM_SEND_NODE", at));
      n.comm_bytes = required(seen.comm_size, "comm_size", "COMM_SEND_NODE", at);
      break;
    case work::EtNodeType::Recv:
      n.peer = static_cast<int>(required(seen.comm_src, "comm_src", "COMM_RECV_NODE", at));
      n.comm_bytes = required(seen.comm_size, "comm_size", "COMM_RECV_NODE", at);
      break;
    default: break;
  }
  return n;
}

// Unique ids. Dependencies on nodes the file does not hold, and of a node on itself, are
// dropped and counted (the report says how many): Chakra's converter writes both.
void check_ids(work::EtRank& r, int rank) {
  std::unordered_set<std::uint64_t> ids;
  for (const work::EtNode& n : r.nodes) {
    if (!ids.insert(n.id).second) {
      At{r.file, rank, n.id}.fail("a second node has this id");
    }
  }
  for (work::EtNode& n : r.nodes) {
    std::erase_if(n.deps, [&](std::uint64_t d) {
      if (d != n.id && ids.contains(d)) {
        return false;
      }
      if (r.dropped_deps++ == 0) {
        r.first_dropped = d == n.id ? fmt::format("node {} on itself", n.id)
                                    : fmt::format("node {} on node {}", n.id, d);
      }
      return true;
    });
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// "name.<digits>.et" -> (stem "name", rank), or nothing.
std::optional<std::pair<std::string, int>> rank_file(const std::string& filename) {
  constexpr std::string_view kExt = ".et";
  if (filename.size() <= kExt.size() || !filename.ends_with(kExt)) {
    return std::nullopt;
  }
  const std::string base = filename.substr(0, filename.size() - kExt.size());
  const std::size_t dot = base.rfind('.');
  if (dot == std::string::npos || dot + 1 == base.size() || base.size() - dot > 8) {
    return std::nullopt;
  }
  int rank = 0;
  const char* first = base.data() + dot + 1;
  const char* last = base.data() + base.size();
  const auto [ptr, ec] = std::from_chars(first, last, rank);
  if (ec != std::errc() || ptr != last || !std::all_of(first, last, ::isdigit)) {
    return std::nullopt;
  }
  return std::pair{base.substr(0, dot), rank};
}

std::vector<std::string> ordered(const std::map<int, std::string>& files, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& [rank, file] : files) {
    if (rank != static_cast<int>(out.size())) {
      throw EtError(fmt::format(
          "{}: rank {}'s file ({}.{}.et) is missing: a trace has one file per rank, numbered "
          "from 0 ({} found, the highest rank {})",
          name, out.size(), name, out.size(), files.size(), files.rbegin()->first));
    }
    out.push_back(file);
  }
  return out;
}

}  // namespace

std::vector<std::string> trace_files(const std::string& where) {
  std::error_code ec;
  const bool folder = fs::is_directory(where, ec);
  const fs::path dir = folder ? fs::path(where) : fs::path(where).parent_path();
  std::string stem = folder ? std::string() : fs::path(where).filename().string();
  if (const auto one = rank_file(stem); one && !folder) {
    stem = one->first;  // one rank's file names its trace: NAME.3.et is NAME
  }
  std::map<std::string, std::map<int, std::string>> families;
  fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec);
  if (ec) {
    throw EtError(fmt::format("{}: cannot list {}: {}", where, dir.string(), ec.message()));
  }
  for (const fs::directory_entry& e : it) {
    const auto parsed = rank_file(e.path().filename().string());
    if (parsed && (folder || parsed->first == stem) && parsed->second < kMaxRanks) {
      families[parsed->first][parsed->second] = e.path().string();
    }
  }
  if (families.empty()) {
    throw EtError(fmt::format("{}: no Chakra trace files ({}.0.et, {}.1.et, ...) found", where,
                              folder ? where + "/NAME" : where, folder ? where + "/NAME" : where));
  }
  if (families.size() > 1) {
    throw EtError(fmt::format("{}: holds the traces \"{}\" and \"{}\"; name one as "
                              "FOLDER/NAME (the files' part before .<rank>.et)",
                              where, families.begin()->first, std::next(families.begin())->first));
  }
  return ordered(families.begin()->second, (dir / families.begin()->first).string());
}

work::EtRank read_rank(const std::string& file, int rank, std::string& version) {
  // The library logs what fails to parse to stderr; the one line hopsim prints says it.
  static std::once_flag quiet;
  std::call_once(quiet, [] { google::protobuf::SetLogHandler(nullptr); });
  // Non-blocking: a FIFO named like a rank file is refused below instead of waited on.
  const Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  const At at{file, rank, std::nullopt};
  if (fd.get() < 0) {
    at.fail(fmt::format("cannot open: {}", std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    at.fail("is not a regular file");
  }
  if (st.st_size > kMaxFileBytes) {
    at.fail(fmt::format("is {} bytes; at most {} GiB are read per rank", st.st_size,
                        kMaxFileBytes >> 30));
  }
  google::protobuf::io::FileInputStream in(fd.get());
  bool clean_eof = false;
  pb::GlobalMetadata meta;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&meta, &in, &clean_eof)) {
    at.fail(clean_eof ? "is empty: a Chakra ET file starts with a GlobalMetadata message"
                      : "does not start with a GlobalMetadata message (truncated, or not a "
                        "Chakra ET file)");
  }
  version = meta.version();
  work::EtRank out;
  out.file = file;
  pb::Node m;
  for (;;) {
    m.Clear();
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&m, &in, &clean_eof)) {
      if (clean_eof) {
        break;
      }
      at.fail(out.nodes.empty()
                  ? std::string("the first node message is truncated or malformed")
                  : fmt::format("the node message after node {} (message {}) is truncated or "
                                "malformed",
                                out.nodes.back().id, out.nodes.size() + 2));
    }
    if (out.nodes.size() == kMaxNodes) {
      at.fail(fmt::format("holds more than {} nodes", kMaxNodes));
    }
    out.nodes.push_back(convert(m, At{file, rank, m.id()}));
  }
  check_ids(out, rank);
  return out;
}

work::EtTrace read_trace(const std::string& where) {
  work::EtTrace trace;
  const std::vector<std::string> files = trace_files(where);
  for (std::size_t r = 0; r < files.size(); ++r) {
    std::string version;
    trace.ranks.push_back(read_rank(files[r], static_cast<int>(r), version));
    if (r == 0) {
      trace.version = version;
    }
  }
  return trace;
}

namespace {

Attr attr(std::string_view name) {
  Attr a;
  a.set_name(std::string(name));
  return a;
}

pb::CollectiveCommType comm_type(const work::EtCollective& c) {
  if (c.kind != work::EtCollective::Kind::Op) {
    return c.kind == work::EtCollective::Kind::Barrier ? pb::BARRIER : pb::BROADCAST;
  }
  switch (c.op) {
    case work::CollectiveOp::AllReduce: return pb::ALL_REDUCE;
    case work::CollectiveOp::AllGather: return pb::ALL_GATHER;
    case work::CollectiveOp::ReduceScatter: return pb::REDUCE_SCATTER;
    case work::CollectiveOp::AllToAll: return pb::ALL_TO_ALL;
    case work::CollectiveOp::SendRecv: break;
  }
  throw EtError("a send/recv is written as COMM_SEND_NODE and COMM_RECV_NODE, not a collective");
}

pb::NodeType node_type(work::EtNodeType t) {
  switch (t) {
    case work::EtNodeType::Metadata: return pb::METADATA_NODE;
    case work::EtNodeType::Compute: return pb::COMP_NODE;
    case work::EtNodeType::Send: return pb::COMM_SEND_NODE;
    case work::EtNodeType::Recv: return pb::COMM_RECV_NODE;
    case work::EtNodeType::Collective: return pb::COMM_COLL_NODE;
  }
  return pb::INVALID_NODE;
}

// The attributes of a node, as Chakra's converter and ASTRA-sim's feeder type them.
void add_attrs(const work::EtNode& n, pb::Node& m) {
  auto add = [&m](Attr a) { *m.add_attr() = std::move(a); };
  if (n.type == work::EtNodeType::Compute) {
    Attr cpu = attr("is_cpu_op");
    cpu.set_bool_val(n.cpu);
    add(cpu);
    if (n.stream) {
      Attr s = attr("stream");
      s.set_int64_val(*n.stream);
      add(s);
    }
    if (n.flops > 0) {
      Attr f = attr("num_ops");
      f.set_int64_val(static_cast<std::int64_t>(n.flops));
      add(f);
    }
    if (n.tensor_bytes > 0) {
      Attr t = attr("tensor_size");
      t.set_uint64_val(static_cast<std::uint64_t>(n.tensor_bytes));
      add(t);
    }
    return;
  }
  if (n.type == work::EtNodeType::Metadata) {
    return;
  }
  if (n.type == work::EtNodeType::Collective) {
    Attr t = attr("comm_type");
    t.set_int64_val(comm_type(n.collective));
    add(t);
  } else {
    Attr peer = attr(n.type == work::EtNodeType::Send ? "comm_dst" : "comm_src");
    peer.set_int32_val(n.peer);
    add(peer);
    Attr tag = attr("comm_tag");
    tag.set_int32_val(static_cast<std::int32_t>(n.tag));
    add(tag);
  }
  Attr size = attr("comm_size");
  size.set_int64_val(n.comm_bytes);
  add(size);
  if (!n.group.empty()) {
    Attr g = attr("pg_name");
    g.set_string_val(n.group);
    add(g);
  }
}

}  // namespace

std::string encode_rank(const work::EtRank& rank) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  pb::GlobalMetadata meta;
  meta.set_version(std::string(kSchemaVersion));
  Attr schema = attr("schema");
  schema.set_string_val("hopsim");
  *meta.add_attr() = schema;
  google::protobuf::util::SerializeDelimitedToZeroCopyStream(meta, &stream);
  pb::Node m;
  for (const work::EtNode& n : rank.nodes) {
    m.Clear();
    m.set_id(n.id);
    m.set_name(n.name);
    m.set_type(node_type(n.type));
    for (std::uint64_t d : n.deps) {
      m.add_data_deps(d);
    }
    // ET durations are whole microseconds: the nearest.
    const std::int64_t us = (n.duration.count_ps() + 500'000) / 1'000'000;
    m.set_duration_micros(static_cast<std::uint64_t>(us));
    add_attrs(n, m);
    google::protobuf::util::SerializeDelimitedToZeroCopyStream(m, &stream);
  }
  return out;
}

}  // namespace hopsim::chakra
