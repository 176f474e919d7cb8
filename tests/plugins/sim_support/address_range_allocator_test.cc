// The first-fit range allocator behind simulated device memory: rounding,
// first fit, coalescing on release in every order, and exhaustion.
#include "plugins/sim_support/address_range_allocator.h"

#include <optional>

#include "gtest/gtest.h"

namespace openreg::sim {
namespace {

constexpr uint64_t kPage = 4096;

TEST(AddressRangeAllocatorTest, RoundsToTheGranuleAndFitsFirst) {
  AddressRangeAllocator ranges(10 * kPage, kPage);
  EXPECT_EQ(ranges.Allocate(1), 0u);
  EXPECT_EQ(ranges.Allocate(kPage + 1), kPage);
  EXPECT_EQ(ranges.Allocate(kPage), 3 * kPage);
  EXPECT_EQ(ranges.free_bytes(), 6 * kPage);
  // The hole left by the first range is reused first.
  ranges.Release(0, 1);
  EXPECT_EQ(ranges.Allocate(10), 0u);
}

TEST(AddressRangeAllocatorTest, FailsWhenNoHoleIsLargeEnough) {
  AddressRangeAllocator ranges(4 * kPage, kPage);
  ASSERT_EQ(ranges.Allocate(kPage), 0u);
  ASSERT_EQ(ranges.Allocate(kPage), kPage);
  ASSERT_EQ(ranges.Allocate(kPage), 2 * kPage);
  ranges.Release(kPage, kPage);
  // Two free pages, but not adjacent.
  EXPECT_EQ(ranges.free_bytes(), 2 * kPage);
  EXPECT_EQ(ranges.largest_hole(), kPage);
  EXPECT_EQ(ranges.Allocate(2 * kPage), std::nullopt);
  EXPECT_EQ(ranges.Allocate(~uint64_t{0}), std::nullopt);
}

TEST(AddressRangeAllocatorTest, ReleaseCoalescesWithBothNeighbours) {
  AddressRangeAllocator ranges(3 * kPage, kPage);
  ASSERT_EQ(ranges.Allocate(kPage), 0u);
  ASSERT_EQ(ranges.Allocate(kPage), kPage);
  ASSERT_EQ(ranges.Allocate(kPage), 2 * kPage);
  ranges.Release(0, kPage);
  ranges.Release(2 * kPage, kPage);
  ranges.Release(kPage, kPage);  // joins the holes on both sides
  EXPECT_EQ(ranges.largest_hole(), 3 * kPage);
  EXPECT_EQ(ranges.Allocate(3 * kPage), 0u);
}

TEST(AddressRangeAllocatorTest, ReleaseCoalescesWithTheHoleAfter) {
  AddressRangeAllocator ranges(3 * kPage, kPage);
  ASSERT_EQ(ranges.Allocate(2 * kPage), 0u);
  ranges.Release(0, 2 * kPage);
  EXPECT_EQ(ranges.largest_hole(), 3 * kPage);
}

}  // namespace
}  // namespace openreg::sim
