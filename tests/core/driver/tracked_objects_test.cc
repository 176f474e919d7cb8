// TrackedObjects: live lookup, lookup by an address inside, and a graveyard
// that stays within its capacity however objects are revived and destroyed.
#include "core/driver/tracked_objects.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace openreg {
namespace {

TEST(TrackedObjectsTest, DestroyMovesToTheGraveyard) {
  TrackedObjects<uintptr_t, int> objects(4);
  objects.Add(100, 1);
  ASSERT_NE(objects.FindLive(100), nullptr);
  EXPECT_EQ(*objects.FindLive(100), 1);
  EXPECT_EQ(objects.FindDestroyed(100), nullptr);
  EXPECT_EQ(objects.Destroy(100), 1);
  EXPECT_EQ(objects.FindLive(100), nullptr);
  ASSERT_NE(objects.FindDestroyed(100), nullptr);
  EXPECT_FALSE(objects.Destroy(100).has_value());
  // Reused by the driver: live again.
  objects.Add(100, 2);
  EXPECT_EQ(*objects.FindLive(100), 2);
  EXPECT_EQ(objects.FindDestroyed(100), nullptr);
}

TEST(TrackedObjectsTest, AtOrBelowFindsTheContainingCandidate) {
  TrackedObjects<uintptr_t, int> objects(4);
  objects.Add(100, 1);
  objects.Add(200, 2);
  EXPECT_FALSE(objects.LiveAtOrBelow(99).has_value());
  EXPECT_EQ(objects.LiveAtOrBelow(100)->key, 100u);
  EXPECT_EQ(objects.LiveAtOrBelow(199)->key, 100u);
  EXPECT_EQ(*objects.LiveAtOrBelow(250)->info, 2);
  objects.Destroy(200);
  EXPECT_EQ(objects.LiveAtOrBelow(250)->key, 100u);
  EXPECT_EQ(objects.DestroyedAtOrBelow(250)->key, 200u);
}

TEST(TrackedObjectsTest, GraveyardForgetsTheOldestBeyondItsCapacity) {
  TrackedObjects<uintptr_t, int> objects(3);
  for (uintptr_t key = 1; key <= 5; ++key) {
    objects.Add(key, 0);
    objects.Destroy(key);
  }
  EXPECT_EQ(objects.FindDestroyed(1), nullptr);
  EXPECT_EQ(objects.FindDestroyed(2), nullptr);
  for (uintptr_t key = 3; key <= 5; ++key) {
    EXPECT_NE(objects.FindDestroyed(key), nullptr) << key;
  }
}

TEST(TrackedObjectsTest, ReusingOneAddressForeverStaysBounded) {
  // A driver that hands the same address out again each time must not make
  // an earlier burial forget the latest one.
  TrackedObjects<uintptr_t, int> objects(2);
  for (int round = 0; round < 1000; ++round) {
    objects.Add(42, round);
    objects.Destroy(42);
  }
  ASSERT_NE(objects.FindDestroyed(42), nullptr);
  EXPECT_EQ(*objects.FindDestroyed(42), 999);
  objects.Add(7, 0);
  objects.Add(8, 0);
  objects.DestroyAll();
  EXPECT_EQ(objects.live_count(), 0u);
  EXPECT_NE(objects.FindDestroyed(7), nullptr);
  EXPECT_NE(objects.FindDestroyed(8), nullptr);
  EXPECT_EQ(objects.FindDestroyed(42), nullptr);
}

}  // namespace
}  // namespace openreg
