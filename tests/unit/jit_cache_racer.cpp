// A separate process for jit_cache_test.cpp, which spawns it: several of
// these race one cache directory, one is killed with SIGKILL mid-build, one
// looks at a directory as another user.
//
//   jit_cache_racer race DIR LOG GO KEY...     4 threads ask for every KEY; each build appends
//                                             "KEY\n" to LOG; all start once the file GO exists
//   jit_cache_racer build-slowly DIR KEY MARK  builds KEY, creating MARK, then sleeps a minute
//   jit_cache_racer probe DIR KEY [UID]        (as UID, when given) asks for KEY and prints
//                                             "directory:", "source:", "bytes:" and "warning:"
//                                             lines
//
// Every build of KEY returns jit_cache_payload(KEY) and every answer is checked
// against it. Exit status: 0 fine, 1 a wrong answer, 2 an error, 3 cannot switch user.
#include <fcntl.h>
#include <grp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "jit/cache/kernel_cache.hpp"
#include "jit_cache_payload.hpp"

using archfit::jit::KernelCache;
using archfit::testing::jit_cache_payload;

namespace {

KernelCache::Options options_for(const char* dir) {
  KernelCache::Options options;
  options.dir = dir;
  options.on_warning = [](const std::string& message) {
    std::printf("warning: %s\n", message.c_str());
  };
  return options;
}

int race(const char* dir, const char* log, const char* go, const std::vector<std::string>& keys) {
  KernelCache cache(options_for(dir));
  while (::access(go, F_OK) != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int log_fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (log_fd < 0) return 2;
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < failures.size(); ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < keys.size(); ++i) {
        const std::string& key = keys[(i + t + static_cast<size_t>(::getpid())) % keys.size()];
        try {
          const auto result = cache.get_or_build(key, [&] {
            const std::string line = key + "\n";
            if (::write(log_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
              throw std::runtime_error("cannot append to the build log");
            std::this_thread::sleep_for(std::chrono::milliseconds(40));
            return jit_cache_payload(key);
          });
          if (*result.image != jit_cache_payload(key)) failures[t] = 1;
        } catch (const std::exception& error) {
          std::fprintf(stderr, "%s: %s\n", key.c_str(), error.what());
          failures[t] = 2;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ::close(log_fd);
  int status = 0;
  for (int failure : failures) status = std::max(status, failure);
  return status;
}

int build_slowly(const char* dir, const std::string& key, const char* marker) {
  KernelCache cache(options_for(dir));
  cache.get_or_build(key, [&] {
    ::close(::open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return jit_cache_payload(key);
  });
  return 0;
}

int probe(const char* dir, const std::string& key) {
  KernelCache cache(options_for(dir));
  const auto result = cache.get_or_build(key, [&] { return jit_cache_payload(key); });
  const auto directory = cache.directory();
  std::printf("directory: %s\n", directory ? directory->c_str() : "memory");
  std::printf("source: %s\n", archfit::jit::to_string(result.source));
  std::printf("bytes: %s\n", *result.image == jit_cache_payload(key) ? "right" : "wrong");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "race" && argc >= 6)
      return race(argv[2], argv[3], argv[4], {argv + 5, argv + argc});
    if (mode == "build-slowly" && argc == 5) return build_slowly(argv[2], argv[3], argv[4]);
    if (mode == "probe" && (argc == 4 || argc == 5)) {
      if (argc == 5) {
        const auto uid = static_cast<uid_t>(std::stoul(argv[4]));
        if (::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0) {
          std::perror("cannot switch user");
          return 3;
        }
      }
      return probe(argv[2], argv[3]);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "jit_cache_racer: %s\n", error.what());
    return 2;
  }
  std::fprintf(stderr, "usage: see the comment at the top of jit_cache_racer.cpp\n");
  return 2;
}
