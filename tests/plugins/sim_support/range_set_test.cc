// The coalescing range set behind the range allocator's holes and the
// retained execution pages: insertion joins neighbours, erasure splits ranges
// that stick out, containment needs one range to cover all.
#include "plugins/sim_support/range_set.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace openreg::sim {
namespace {

std::vector<std::pair<uint64_t, uint64_t>> Ranges(const RangeSet& set) {
  return {set.ranges().begin(), set.ranges().end()};
}

TEST(RangeSetTest, InsertJoinsTouchingNeighbours) {
  RangeSet set;
  set.Insert(0, 10);
  set.Insert(20, 10);
  EXPECT_EQ(set.ranges().size(), 2u);
  set.Insert(10, 10);  // touches both
  EXPECT_EQ(Ranges(set), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 30}}));
  EXPECT_EQ(set.bytes(), 30u);
}

TEST(RangeSetTest, EraseSplitsAndReportsWhatItRemoved) {
  RangeSet set;
  set.Insert(0, 10);
  set.Insert(20, 10);
  set.Insert(40, 10);
  // Cuts the first range's tail, the whole second, the third's head, and
  // counts only the bytes the set held.
  EXPECT_EQ(set.Erase(5, 40), 5u + 10u + 5u);
  EXPECT_EQ(Ranges(set),
            (std::vector<std::pair<uint64_t, uint64_t>>{{0, 5}, {45, 5}}));
  EXPECT_EQ(set.bytes(), 10u);
  // From the middle of one range: two pieces remain.
  set.Insert(100, 10);
  EXPECT_EQ(set.Erase(103, 2), 2u);
  EXPECT_EQ(Ranges(set), (std::vector<std::pair<uint64_t, uint64_t>>{
                             {0, 5}, {45, 5}, {100, 3}, {105, 5}}));
  // Nothing there: nothing removed.
  EXPECT_EQ(set.Erase(60, 20), 0u);
  EXPECT_EQ(set.bytes(), 18u);
}

TEST(RangeSetTest, ContainsNeedsEveryOffset) {
  RangeSet set;
  set.Insert(10, 10);
  set.Insert(30, 10);
  EXPECT_TRUE(set.Contains(10, 10));
  EXPECT_TRUE(set.Contains(12, 3));
  EXPECT_FALSE(set.Contains(5, 10));   // starts before
  EXPECT_FALSE(set.Contains(15, 10));  // runs past the end
  EXPECT_FALSE(set.Contains(10, 30));  // spans a gap
  EXPECT_FALSE(set.Contains(0, 1));
}

}  // namespace
}  // namespace openreg::sim
