#pragma once
// A per-test temporary folder for unit tests that write input files: named
// after the test and the process id, removed with everything in it when the
// test ends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fabricsim::testing {

class TempDir {
 public:
  /// `prefix` tells the test files apart (e.g. "config", "limits").
  explicit TempDir(const std::string& prefix) {
    dir_ = std::filesystem::temp_directory_path() /
           ("fabricsim_test_" + prefix + "_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// Write `text` to `name` inside the folder; returns the file's path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace fabricsim::testing
