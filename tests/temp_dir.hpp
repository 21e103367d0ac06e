// A scratch folder for one test case, removed with it; named by the test, the process and a
// count (ctest runs the cases as parallel processes, and one case may hold several).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include <unistd.h>

namespace hopsim::test {

class TempDir {
 public:
  explicit TempDir(const std::string& test)
      : path_(std::filesystem::temp_directory_path() /
              fmt::format("hopsim_{}_{}_{}", test, ::getpid(), next_++)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }

  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  std::string path(const std::string& name) const { return (path_ / name).string(); }

  // Writes `bytes` to `name` (its folders made first) and returns the file's path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }

 private:
  static inline int next_ = 0;
  std::filesystem::path path_;
};

}  // namespace hopsim::test
