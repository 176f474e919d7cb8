#include "core/aten/result_memory_plan.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>

namespace openreg {
namespace {

constexpr size_t kOutputBytes = 4096;

// Stands in for a kernel: the router's side of each allocation.
class PlanTest : public ::testing::Test {
 protected:
  // What the router hands out for an allocation of `nbytes`: the lent
  // output memory, or the next of `scratch_`.
  void* Allocate(ResultMemoryPlan& plan, size_t nbytes) {
    if (void* lent = plan.Lend(nbytes)) return lent;
    void* fresh = &scratch_.at(next_scratch_++);
    plan.Record(nbytes, fresh);
    return fresh;
  }

  ResultOrdinals ordinals_;
  std::array<char, 1> output_{};
  std::array<char, 8> scratch_{};
  size_t next_scratch_ = 0;
};

TEST_F(PlanTest, FirstRunLendsNothingAndLearnsWhichAllocationIsTheResult) {
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(0, output_.data(), kOutputBytes);
  Allocate(plan, kOutputBytes);              // a blocked buffer
  Allocate(plan, 64);                        // small scratch
  void* result = Allocate(plan, kOutputBytes);  // the dense result
  EXPECT_FALSE(plan.Learn(0, result, /*fits=*/true));
  EXPECT_TRUE(plan.LentMemory().empty());
  EXPECT_EQ(ordinals_.Get(0), 1);
}

TEST_F(PlanTest, NextRunLendsTheLearnedAllocationAndSkipsTheOthers) {
  ordinals_.Set(0, 1);
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(0, output_.data(), kOutputBytes);
  EXPECT_NE(Allocate(plan, kOutputBytes), output_.data());
  EXPECT_NE(Allocate(plan, 64), output_.data());
  void* result = Allocate(plan, kOutputBytes);
  EXPECT_EQ(result, output_.data());
  EXPECT_TRUE(plan.Learn(0, result, /*fits=*/true));
  ASSERT_EQ(plan.LentMemory().size(), 1u);
  EXPECT_EQ(plan.LentMemory()[0].first, output_.data());
  EXPECT_EQ(plan.LentMemory()[0].second, 0u);
  EXPECT_EQ(ordinals_.Get(0), 1);
}

TEST_F(PlanTest, AWrongGuessIsReportedAndLearnedAgain) {
  ordinals_.Set(0, 0);
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(0, output_.data(), kOutputBytes);
  EXPECT_EQ(Allocate(plan, kOutputBytes), output_.data());  // scratch took it
  void* result = Allocate(plan, kOutputBytes);
  EXPECT_FALSE(plan.Learn(0, result, /*fits=*/true));
  EXPECT_EQ(ordinals_.Get(0), 1);
}

TEST_F(PlanTest, AResultNotAllocatedByTheKernelLendsNothingNextTime) {
  ordinals_.Set(0, 0);
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(0, output_.data(), kOutputBytes);
  char input = 0;  // e.g. a kernel returning an argument
  EXPECT_FALSE(plan.Learn(0, &input, /*fits=*/true));
  EXPECT_EQ(ordinals_.Get(0), ResultOrdinals::kUnknown);
}

TEST_F(PlanTest, AnAddressReusedAfterAFreeCountsAsTheLaterAllocation) {
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(0, output_.data(), kOutputBytes);
  plan.Record(kOutputBytes, &scratch_[0]);  // freed inside the kernel...
  plan.Record(kOutputBytes, &scratch_[1]);
  plan.Record(kOutputBytes, &scratch_[0]);  // ...and its address reused
  EXPECT_FALSE(plan.Learn(0, &scratch_[0], /*fits=*/true));
  EXPECT_EQ(ordinals_.Get(0), 2);
}

TEST_F(PlanTest, EachOutputOfOneSizeIsLentToItsOwnAllocation) {
  std::array<char, 1> second_output{};
  ordinals_.Set(0, 1);
  ordinals_.Set(1, 0);
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(0, output_.data(), kOutputBytes);
  plan.AddOutput(1, second_output.data(), kOutputBytes);
  EXPECT_EQ(Allocate(plan, kOutputBytes), second_output.data());
  EXPECT_EQ(Allocate(plan, kOutputBytes), output_.data());
  EXPECT_TRUE(plan.Learn(0, output_.data(), /*fits=*/true));
  EXPECT_TRUE(plan.Learn(1, second_output.data(), /*fits=*/true));
  EXPECT_EQ(plan.LentMemory().size(), 2u);
}

TEST_F(PlanTest, ResultsPastTheLimitAreNeverLent) {
  const size_t past = ResultOrdinals::kResults;
  ordinals_.Set(past, 0);
  EXPECT_EQ(ordinals_.Get(past), ResultOrdinals::kUnknown);
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(past, output_.data(), kOutputBytes);
  EXPECT_NE(Allocate(plan, kOutputBytes), output_.data());
}

TEST_F(PlanTest, OutputsWithoutMemoryAreLeftOut) {
  ordinals_.Set(0, 0);
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(0, output_.data(), 0);
  EXPECT_EQ(plan.Lend(0), nullptr);
  EXPECT_FALSE(plan.Learn(0, output_.data(), /*fits=*/true));
}

TEST_F(PlanTest, AResultLaidOutOtherwiseThanItsOutputLendsNothingNextTime) {
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(0, output_.data(), kOutputBytes);
  void* result = Allocate(plan, kOutputBytes);
  EXPECT_FALSE(plan.Learn(0, result, /*fits=*/false));
  EXPECT_EQ(ordinals_.Get(0), ResultOrdinals::kUnknown);
}

TEST_F(PlanTest, AnOpThatKeptLentMemoryIsNeverLentAgain) {
  ordinals_.NeverLend();
  ordinals_.Set(0, 0);
  EXPECT_EQ(ordinals_.Get(0), ResultOrdinals::kUnknown);
  ResultMemoryPlan plan(ordinals_);
  plan.AddOutput(0, output_.data(), kOutputBytes);
  EXPECT_NE(Allocate(plan, kOutputBytes), output_.data());
}

}  // namespace
}  // namespace openreg
