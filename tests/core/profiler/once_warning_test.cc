#include "core/profiler/once_warning.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace openreg::profiler {
namespace {

TEST(OnceWarningTest, IssuesTheFirstMessageOnly) {
  std::vector<std::string> seen;
  OnceWarning warning([&](const std::string& m) { seen.push_back(m); });
  EXPECT_TRUE(warning.Warn("first"));
  EXPECT_FALSE(warning.Warn("second"));
  EXPECT_EQ(seen, std::vector<std::string>{"first"});
}

TEST(OnceWarningTest, GoesToTheSinkSetLast) {
  int old_calls = 0;
  std::string seen;
  OnceWarning warning([&](const std::string&) { ++old_calls; });
  warning.SetSink([&](const std::string& m) { seen = m; });
  EXPECT_TRUE(warning.Warn("to the new sink"));
  EXPECT_EQ(old_calls, 0);
  EXPECT_EQ(seen, "to the new sink");
}

// Profilers may be configured from several threads at once: one warning in
// all, and the sink may call Warn() itself (it runs outside the mutex).
TEST(OnceWarningTest, OneWarningAcrossThreads) {
  std::atomic<int> calls{0};
  OnceWarning* self = nullptr;
  OnceWarning warning([&](const std::string&) {
    ++calls;
    EXPECT_FALSE(self->Warn("from the sink"));
  });
  self = &warning;
  std::atomic<int> issued{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 100; ++j) {
        if (warning.Warn("missing")) ++issued;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(issued.load(), 1);
}

}  // namespace
}  // namespace openreg::profiler
