// The progress line of `archfit scan` and `archfit check`: silent for fast
// scans, a redrawn line on a terminal, plain lines into a log.
#include "progress_line.hpp"

#include <gtest/gtest.h>

#include <sstream>

using archfit::binary::ScanProgress;
using archfit::cli::ProgressLine;
using namespace std::chrono_literals;

namespace {

ScanProgress at(size_t done, size_t total, uint64_t bytes_done, uint64_t bytes_total) {
  ScanProgress progress;
  progress.files_done = done;
  progress.files_total = total;
  progress.bytes_done = bytes_done;
  progress.bytes_total = bytes_total;
  return progress;
}

}  // namespace

TEST(ProgressLine, AScanFasterThanTheDelayPrintsNothing) {
  std::ostringstream out;
  {
    ProgressLine line(ProgressLine::Mode::lines, out, 1h);
    line.update(at(1, 2, 500'000'000, 1'000'000'000));
    line.update(at(2, 2, 1'000'000'000, 1'000'000'000));
  }
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressLine, LogLinesNameFilesAndGigabytes) {
  std::ostringstream out;
  ProgressLine line(ProgressLine::Mode::lines, out, 0ms);
  line.update(at(12, 200, 800'000'000, 1'500'000'000));
  EXPECT_EQ(out.str().rfind("archfit: scanning 12/200 files, 0.8 of 1.5 GB, ", 0), 0u) << out.str();
  EXPECT_EQ(out.str().back(), '\n');
  // Within the second, only the last update is printed again.
  line.update(at(13, 200, 810'000'000, 1'500'000'000));
  line.update(at(200, 200, 1'500'000'000, 1'500'000'000));
  EXPECT_EQ(out.str().find("13/200"), std::string::npos);
  EXPECT_NE(out.str().find("200/200 files, 1.5 of 1.5 GB"), std::string::npos);
}

TEST(ProgressLine, ATerminalLineIsRedrawnInPlaceAndClearedAtTheEnd) {
  std::ostringstream out;
  {
    ProgressLine line(ProgressLine::Mode::terminal, out, 0ms);
    line.update(at(1, 3, 1, 3));
    EXPECT_EQ(out.str().rfind("\r\033[Karchfit: scanning 1/3 files", 0), 0u);
    EXPECT_EQ(out.str().find('\n'), std::string::npos);
  }
  EXPECT_EQ(out.str().substr(out.str().size() - 4), "\r\033[K");
}

// A walk of a big tree (or one through /usr) finds nothing to read for
// seconds: the line still moves, and says it is walking, not scanning 0/0.
TEST(ProgressLine, AWalkThatHasFoundNothingYetStillReportsItsDirectories) {
  std::ostringstream out;
  ProgressLine line(ProgressLine::Mode::lines, out, 0ms);
  ScanProgress walking;
  walking.walking = true;
  walking.directories = 4200;
  walking.last = "/usr/share/doc";
  line.update(walking);
  EXPECT_EQ(out.str().rfind("archfit: walking 4200 directories, 0 files to read so far, ", 0), 0u)
      << out.str();
  // Walking with no files is not "the last update": a second one within the
  // second is not printed.
  walking.directories = 4300;
  line.update(walking);
  EXPECT_EQ(out.str().find("4300"), std::string::npos) << out.str();
}

TEST(ProgressLine, OffGivesNoCallbackSoTheScanSkipsTheWork) {
  std::ostringstream out;
  ProgressLine off(ProgressLine::Mode::off, out, 0ms);
  EXPECT_FALSE(off.callback());
  ProgressLine on(ProgressLine::Mode::lines, out, 0ms);
  ASSERT_TRUE(on.callback());
  on.callback()(at(1, 1, 10, 10));
  EXPECT_NE(out.str().find("1/1 files"), std::string::npos);
  EXPECT_EQ(ProgressLine::choose(true, true), ProgressLine::Mode::off);  // --no-progress wins
}
