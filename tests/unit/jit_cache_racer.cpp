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
//   jit_cache_racer stress DIR SECONDS KEYS    8 threads mix builds, finds, discards, evictions
//                                             (a small budget) and clears of KEYS keys for
//                                             SECONDS; prints "requests: N wrong: W"
//   jit_cache_racer tamper DIR SECONDS         flips a byte in, or truncates, a random entry
//                                             file every millisecond; prints "tampered: N"
//
// Every build of KEY returns jit_cache_payload(KEY) and every answer is checked
// against it. Exit status: 0 fine, 1 a wrong answer, 2 an error, 3 cannot switch user.
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <random>
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

int stress(const char* dir, int seconds, size_t key_count) {
  KernelCache::Options options = options_for(dir);
  options.max_bytes = 48 * 1024;                   // about a dozen entries: evictions all the time
  options.on_warning = [](const std::string&) {};  // tampering warns on every read
  KernelCache cache(options);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::atomic<uint64_t> requests{0}, wrong{0}, errors{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::minstd_rand random(static_cast<unsigned>(::getpid()) * 31 + t);
      while (std::chrono::steady_clock::now() < until) {
        const std::string key = archfit::testing::jit_cache_stress_key(random() % key_count);
        const std::vector<std::byte> expected = archfit::testing::jit_cache_stress_payload(key);
        try {
          const unsigned op = random() % 100;
          if (op < 70) {
            const auto result = cache.get_or_build(key, [&] { return expected; });
            if (*result.image != expected) ++wrong;
          } else if (op < 90) {
            if (const auto found = cache.find(key); found && *found != expected) ++wrong;
          } else if (op < 99) {
            cache.discard(key);
          } else {
            cache.clear();
          }
          ++requests;
        } catch (const std::exception& error) {
          std::fprintf(stderr, "%s: %s\n", key.c_str(), error.what());
          ++errors;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::printf("requests: %llu wrong: %llu errors: %llu\n",
              static_cast<unsigned long long>(requests.load()),
              static_cast<unsigned long long>(wrong.load()),
              static_cast<unsigned long long>(errors.load()));
  return wrong == 0 && errors == 0 ? 0 : 1;
}

int tamper(const char* dir, int seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::minstd_rand random(static_cast<unsigned>(::getpid()));
  uint64_t tampered = 0;
  while (std::chrono::steady_clock::now() < until) {
    std::vector<std::filesystem::path> entries;
    std::error_code error;
    for (std::filesystem::recursive_directory_iterator it(dir, error), end; !error && it != end;
         it.increment(error)) {
      if (it->path().extension() == ".bin") entries.push_back(it->path());
    }
    if (!entries.empty()) {
      const auto& victim = entries[random() % entries.size()];
      const int fd = ::open(victim.c_str(), O_RDWR | O_CLOEXEC);
      struct stat info {};
      if (fd >= 0 && ::fstat(fd, &info) == 0 && info.st_size > 0) {
        if (random() % 4 == 0) {
          if (::ftruncate(fd, static_cast<off_t>(random() % static_cast<uint64_t>(info.st_size))) ==
              0)
            ++tampered;
        } else {
          const off_t at = static_cast<off_t>(random() % static_cast<uint64_t>(info.st_size));
          unsigned char byte = 0;
          if (::pread(fd, &byte, 1, at) == 1) {
            byte ^= static_cast<unsigned char>(1u << (random() % 8));
            if (::pwrite(fd, &byte, 1, at) == 1) ++tampered;
          }
        }
      }
      if (fd >= 0) ::close(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::printf("tampered: %llu\n", static_cast<unsigned long long>(tampered));
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
    if (mode == "stress" && argc == 5)
      return stress(argv[2], std::stoi(argv[3]), std::stoul(argv[4]));
    if (mode == "tamper" && argc == 4) return tamper(argv[2], std::stoi(argv[3]));
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
