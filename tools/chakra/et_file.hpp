// Chakra execution trace files: one file per rank (`<prefix>.<rank>.et`), each a length-
// delimited stream of protobuf messages (a GlobalMetadata, then one Node per node). Reading
// checks everything the replay relies on and names the file, rank and node of the first
// problem; writing produces files Chakra's own tools and ASTRA-sim read.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/trace/et_trace.hpp"

namespace hopsim::chakra {

/// A trace that cannot be replayed: one line, "FILE: rank R: node ID: what".
class EtError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The schema version hopsim writes into GlobalMetadata, and the one whose messages it reads
/// (later files with the same fields read alike).
inline constexpr std::string_view kSchemaVersion = "0.0.4";

/// The rank files of a trace, rank r at index r. `where` is a prefix (`dir/name` for
/// dir/name.0.et, dir/name.1.et, ...), one of its files, or a folder holding one such family. Throws EtError when
/// there is none, when a rank is missing, or when a folder holds two families.
std::vector<std::string> trace_files(const std::string& where);

/// One rank's file, checked: known node types and attributes of the right types, the
/// attributes each node type needs, unique ids, dependencies on nodes of the file.
work::EtRank read_rank(const std::string& file, int rank, std::string& version);

/// Every rank of a trace (trace_files, then read_rank for each).
work::EtTrace read_trace(const std::string& where);

/// `rank` as the bytes of one ET file (GlobalMetadata with kSchemaVersion, then its nodes).
std::string encode_rank(const work::EtRank& rank);

}  // namespace hopsim::chakra
