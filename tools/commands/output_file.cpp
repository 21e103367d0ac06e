// Atomic output: temporary file, fsync, close, rename.
#include "tools/commands/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace hopsim::tools {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw OutputError(fmt::format("{}: cannot write: {}", path, what));
}

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      fail(path, errno_text());
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    fail(path, "exists and is not a regular file");
  }
  const std::filesystem::path target(path);
  const std::string tmp = (target.parent_path() / fmt::format(".{}.tmp.{}",
                                                              target.filename().string(),
                                                              ::getpid()))
                              .string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    fail(path, errno_text());
  }
  try {
    write_all(fd, text, path);
    if (::fsync(fd) != 0) {
      fail(path, errno_text());
    }
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    fail(path, why);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    fail(path, why);
  }
}

}  // namespace hopsim::tools
