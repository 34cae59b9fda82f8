#pragma once
// Runs body(0..count-1) on up to `threads` threads (the caller's among them).
// An exception thrown by any call is rethrown in the caller after all threads
// have joined, so a worker can never terminate the host process.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace archfit::binary {

template <typename Body>
void parallel_for(size_t count, unsigned threads, Body&& body) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        body(i);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const size_t workers = std::min<size_t>(std::max(1u, threads), count);
  {
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
  }
  if (failure) std::rethrow_exception(failure);
}

inline unsigned default_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace archfit::binary
