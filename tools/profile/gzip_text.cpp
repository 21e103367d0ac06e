// Plain or gzip text files, through zlib (gzip_text.hpp).
#include "tools/profile/gzip_text.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <array>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "tools/config/node.hpp"

namespace hopsim::profile {
namespace {

using config::ConfigError;

// The file's bytes, refused before reading when it is not a regular file or is too large.
std::string read_file(const std::string& path, std::size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw ConfigError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    throw ConfigError(fmt::format("{}: is not a regular file", path));
  }
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    throw ConfigError(fmt::format("{}: is {} bytes; at most {} MiB are read", path, st.st_size,
                                  max_bytes >> 20));
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) {
    throw ConfigError(fmt::format("{}: cannot read file", path));
  }
  return bytes;
}

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string inflate_gzip(const std::string& bytes, const std::string& path,
                         std::size_t max_bytes) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {  // 16: a gzip header, not zlib's
    throw ConfigError(fmt::format("{}: cannot start gzip decompression", path));
  }
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());  // read_file's cap keeps this under 4 GiB
  std::string out;
  std::array<char, 1 << 16> buffer{};
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buffer.data());
    z.avail_out = static_cast<uInt>(buffer.size());
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string why = rc == Z_BUF_ERROR ? "truncated" : (z.msg ? z.msg : "corrupt");
      inflateEnd(&z);
      throw ConfigError(fmt::format("{}: not a valid gzip file ({})", path, why));
    }
    out.append(buffer.data(), buffer.size() - z.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&z);
      throw ConfigError(fmt::format("{}: inflates to more than {} MiB; at most that is read",
                                    path, max_bytes >> 20));
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace

std::string read_maybe_gzip(const std::string& path, std::size_t max_bytes) {
  std::string bytes = read_file(path, max_bytes);
  return is_gzip(bytes) ? inflate_gzip(bytes, path, max_bytes) : bytes;
}

std::string gzip(const std::string& text) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("gzip: cannot start compression");
  }
  std::vector<char> out(deflateBound(&z, static_cast<uLong>(text.size())));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t written = static_cast<std::size_t>(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END || written > out.size()) {
    throw std::runtime_error("gzip: compression did not finish");
  }
  return std::string(out.data(), written);
}

}  // namespace hopsim::profile
