// sys/child_process: work run in a forked child comes back as bytes, or
// as the way the child ended — exited, signalled, killed at the time limit
// or on sending too much — and no child is ever left behind.
#include "sys/child_process.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <stdexcept>

using namespace archfit::sys;
using Ending = ChildOutcome::Ending;

namespace {

ChildLimits limits(std::chrono::milliseconds time_limit, size_t max_bytes = 1 << 20) {
  ChildLimits result;
  result.time_limit = time_limit;
  result.max_bytes = max_bytes;
  return result;
}

bool no_children_left() {
  errno = 0;
  return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

}  // namespace

TEST(PluginSandbox, WhatTheWorkReturnsComesBack) {
  const auto outcome = run_in_child(
      [] {
        return std::vector<uint8_t>{1, 2, 3};
      },
      limits(std::chrono::seconds(5)));
  EXPECT_EQ(outcome.ending, Ending::exited);
  EXPECT_EQ(outcome.exit_status, 0);
  EXPECT_EQ(outcome.output, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(describe_failure(outcome, limits(std::chrono::seconds(5)), "testing"), "");
  EXPECT_TRUE(no_children_left());
}

TEST(PluginSandbox, AChildThatSendsMoreThanTheCapIsKilled) {
  const auto cap = limits(std::chrono::seconds(5), 1024);
  const auto outcome = run_in_child([] { return std::vector<uint8_t>(size_t{1} << 20, 7); }, cap);
  EXPECT_EQ(outcome.ending, Ending::sent_too_much);
  EXPECT_EQ(describe_failure(outcome, cap, "testing"),
            "it sent back more than 1024 bytes while testing; killed");
  EXPECT_TRUE(no_children_left());
}

TEST(PluginSandbox, WorkThatThrowsEndsItsChildWithItsOwnStatus) {
  const auto outcome =
      run_in_child([]() -> std::vector<uint8_t> { throw std::runtime_error("thrown"); },
                   limits(std::chrono::seconds(5)));
  EXPECT_EQ(outcome.ending, Ending::exited);
  EXPECT_EQ(outcome.exit_status, kWorkThrew);
}

// A child that closes its end of the pipe and carries on is still killed
// at the time limit: the end of its output is not its end.
TEST(PluginSandbox, AChildThatClosesThePipeAndHangsIsKilledAtTheLimit) {
  const auto limit = limits(std::chrono::milliseconds(300));
  const auto outcome = run_in_child(
      []() -> std::vector<uint8_t> {
        for (int fd = 3; fd < 1024; ++fd) ::close(fd);
        for (;;) ::pause();
      },
      limit);
  EXPECT_EQ(outcome.ending, Ending::timed_out);
  EXPECT_EQ(describe_failure(outcome, limit, "testing"),
            "it did not finish testing within 0.3 s; killed");
  EXPECT_TRUE(no_children_left());
}

TEST(PluginSandbox, SignalsAreNamedAndAKillFromOutsideIsNotACrash) {
  const auto limit = limits(std::chrono::seconds(5));
  const auto killed = run_in_child(
      []() -> std::vector<uint8_t> {
        ::raise(SIGKILL);
        return {};
      },
      limit);
  EXPECT_EQ(killed.ending, Ending::signalled);
  EXPECT_EQ(describe_failure(killed, limit, "testing"),
            "it was killed while testing (signal 9, SIGKILL)");
  const auto bus = run_in_child(
      []() -> std::vector<uint8_t> {
        ::raise(SIGBUS);
        return {};
      },
      limit);
  EXPECT_EQ(describe_failure(bus, limit, "testing"), "it crashed testing (signal 7, SIGBUS)");
}

// A host that ignores SIGCHLD (the kernel then reaps its children) still
// gets the answer; only how the child ended is unknown.
TEST(PluginSandbox, AHostThatIgnoresSigchldStillGetsTheAnswer) {
  struct sigaction ignore {
  }, saved{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &saved), 0);
  const auto outcome = run_in_child(
      [] {
        return std::vector<uint8_t>{4, 2};
      },
      limits(std::chrono::seconds(5)));
  ::sigaction(SIGCHLD, &saved, nullptr);
  EXPECT_EQ(outcome.ending, Ending::vanished);
  EXPECT_EQ(outcome.output, (std::vector<uint8_t>{4, 2}));
}
