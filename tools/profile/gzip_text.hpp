// Reading a text file that may be gzip-compressed (PyTorch's profiler writes traces as
// .json.gz): the bytes as they are, or inflated when they start with gzip's magic.
#pragma once

#include <cstddef>
#include <string>

namespace hopsim::profile {

/// Reads `path` whole: a regular file of at most `max_bytes`, inflated when it is gzip (any
/// name) to at most `max_bytes`. Any problem (no such file, a folder, too large, a corrupt or
/// truncated gzip stream) is a config::ConfigError naming the file.
std::string read_maybe_gzip(const std::string& path, std::size_t max_bytes);

/// `text` gzip-compressed (level 6), for tests and fixtures.
std::string gzip(const std::string& text);

}  // namespace hopsim::profile
