#pragma once
// Runs work on a thread whose stack is small (issue 34): 256 KB, below the
// 1 MB Windows gives a thread and the 8 MB Linux gives a main thread. A
// parser that recurses once per character overflows it and kills the
// process, which is the failure the long-input tests and the long-line
// benchmark guard against. Returns false when the thread cannot be made.
#include <pthread.h>

#include <cstddef>
#include <functional>

namespace archfit::testing {

inline constexpr size_t kSmallStack = 256 * 1024;

inline bool on_small_stack(const std::function<void()>& work, size_t stack = kSmallStack) {
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) != 0) return false;
  if (pthread_attr_setstacksize(&attributes, stack) != 0) {
    pthread_attr_destroy(&attributes);
    return false;
  }
  pthread_t thread;
  auto* job = new std::function<void()>(work);
  const int made = pthread_create(
      &thread, &attributes,
      [](void* argument) -> void* {
        auto* task = static_cast<std::function<void()>*>(argument);
        (*task)();
        delete task;
        return nullptr;
      },
      job);
  pthread_attr_destroy(&attributes);
  if (made != 0) {
    delete job;
    return false;
  }
  pthread_join(thread, nullptr);
  return true;
}

}  // namespace archfit::testing
