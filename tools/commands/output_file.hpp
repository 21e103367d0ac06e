// Output files written atomically: a killed run leaves the old file or the new one, never half.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hopsim::tools {

/// An output could not be written (the run itself succeeded): exit code 1.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Refuses an output that would replace an input: when `output` (a file the command is about to
/// write, or remove) is one of `inputs` (the same file: by device and inode, so that another
/// path to it, a symbolic or hard link, counts), throws config::ConfigError (exit 2) "FLAG:
/// writing OUTPUT would replace INPUT, an input of WHAT; write it elsewhere". An output that
/// does not exist yet replaces nothing. Every command that writes files calls this for each
/// before writing any.
void refuse_input(const std::string& flag, const std::string& output,
                  const std::vector<std::string>& inputs, const std::string& what);

/// Writes `text` to a temporary file beside `path`, flushes it to disk, closes it (checking
/// every step), then renames it over `path`. Refuses a `path` that exists and is not a regular
/// file. Throws OutputError naming the path and the reason.
void write_file_atomically(const std::string& path, const std::string& text);

/// Writes every (path, text) pair as one output: all temporary files first, each flushed to disk
/// and closed, then the renames. A failure before the renames (a full disk) removes every
/// temporary file and leaves each earlier file as it was.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

/// An exclusive lock on a folder (flock on the folder itself: no file is added to it), held
/// while the object lives. Waits up to `wait` for another holder, then throws OutputError
/// naming the folder. The system drops the lock of a process that dies.
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir,
                      std::chrono::milliseconds wait = std::chrono::seconds(60));
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace hopsim::tools
