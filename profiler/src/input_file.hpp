#pragma once
// A file named on the command line (--problems, --verify-instances) must be a regular file: std::ifstream opens
// a folder and then reads nothing (an empty list, silently accepted) and blocks on a FIFO.

#include <filesystem>
#include <string>
#include <system_error>

#include "options.hpp"

namespace tiledispatch::profiler {

inline void require_regular_file(const std::string& flag, const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) throw UsageError(flag + ": cannot open '" + path + "' (no such file)");
  if (std::filesystem::is_directory(status)) throw UsageError(flag + ": '" + path + "' is a directory, not a file");
  if (!std::filesystem::is_regular_file(status)) throw UsageError(flag + ": '" + path + "' is not a regular file");
}

}  // namespace tiledispatch::profiler
