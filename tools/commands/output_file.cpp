// Atomic output: temporary file, fsync, close, rename.
#include "tools/commands/output_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "tools/config/node.hpp"

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

// The temporary file beside `path` that this process writes before renaming it into place.
std::string temporary_of(const std::string& path) {
  const std::filesystem::path target(path);
  return (target.parent_path() /
          fmt::format(".{}.tmp.{}", target.filename().string(), ::getpid()))
      .string();
}

// Writes `text` to `tmp` (for `path`), flushed to disk and closed; on failure `tmp` is gone.
void write_temporary(const std::string& path, const std::string& tmp, const std::string& text) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    fail(path, "exists and is not a regular file");
  }
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
}

}  // namespace

void refuse_input(const std::string& flag, const std::string& output,
                  const std::vector<std::string>& inputs, const std::string& what) {
  struct stat out {};
  if (::stat(output.c_str(), &out) != 0) {
    return;  // nothing there to replace
  }
  for (const std::string& input : inputs) {
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      throw config::ConfigError(fmt::format(
          "{}: writing {} would replace {}, an input of {}; write it elsewhere", flag,
          config::echo(output, 200), config::echo(input, 200), what));
    }
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  write_files_atomically({{path, text}});
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> written;
  try {
    for (const auto& [path, text] : files) {
      const std::string tmp = temporary_of(path);
      write_temporary(path, tmp, text);
      written.push_back(tmp);
    }
  } catch (...) {
    for (const std::string& tmp : written) {
      ::unlink(tmp.c_str());
    }
    throw;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (::rename(written[i].c_str(), files[i].first.c_str()) != 0) {
      const std::string why = errno_text();
      for (std::size_t j = i; j < files.size(); ++j) {
        ::unlink(written[j].c_str());
      }
      fail(files[i].first, why);
    }
  }
}

FolderLock::FolderLock(const std::string& dir, std::chrono::milliseconds wait) {
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) {
    throw OutputError(fmt::format("{}: cannot open the output folder: {}", dir, errno_text()));
  }
  const auto until = std::chrono::steady_clock::now() + wait;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() >= until) {
      const std::string why = errno == EWOULDBLOCK
                                  ? fmt::format("another hopsim run has been writing into it "
                                                "for over {} s; try again when it is done",
                                                wait.count() / 1000)
                                  : errno_text();
      ::close(fd_);
      throw OutputError(fmt::format("{}: cannot lock the output folder: {}", dir, why));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

FolderLock::~FolderLock() {
  ::close(fd_);  // drops the lock
}

}  // namespace hopsim::tools
