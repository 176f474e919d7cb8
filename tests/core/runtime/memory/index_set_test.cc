// core/runtime/memory/index_set.h: members are walked in ascending order,
// across word boundaries, and the walk may erase the index it is visiting.
#include "core/runtime/memory/index_set.h"

#include <cstddef>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace openreg {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

template <size_t kBound>
std::vector<size_t> Members(const IndexSet<kBound>& set) {
  std::vector<size_t> members;
  set.ForEach([&](size_t index) { members.push_back(index); });
  return members;
}

TEST(IndexSetTest, StartsEmpty) {
  IndexSet<2048> set;
  EXPECT_THAT(Members(set), IsEmpty());
  EXPECT_FALSE(set.Contains(0));
  EXPECT_FALSE(set.Contains(2047));
}

TEST(IndexSetTest, WalksMembersInAscendingOrderAcrossWords) {
  IndexSet<2048> set;
  for (size_t index : {2047, 64, 0, 63, 65, 1000, 128}) set.Insert(index);
  set.Insert(64);  // inserting a member again changes nothing
  EXPECT_THAT(Members(set), ElementsAre(0, 63, 64, 65, 128, 1000, 2047));
  EXPECT_TRUE(set.Contains(1000));
  EXPECT_FALSE(set.Contains(999));
}

TEST(IndexSetTest, EraseRemovesOnlyThatIndex) {
  IndexSet<130> set;  // a bound that is not a multiple of 64
  for (size_t index : {1, 2, 64, 129}) set.Insert(index);
  set.Erase(2);
  set.Erase(3);  // not a member: nothing happens
  EXPECT_THAT(Members(set), ElementsAre(1, 64, 129));
}

TEST(IndexSetTest, TheWalkMayEraseTheIndexItVisits) {
  IndexSet<256> set;
  for (size_t index : {5, 6, 70, 71, 200}) set.Insert(index);
  std::vector<size_t> visited;
  set.ForEach([&](size_t index) {
    visited.push_back(index);
    if (index % 2 == 0) set.Erase(index);
  });
  EXPECT_THAT(visited, ElementsAre(5, 6, 70, 71, 200));
  EXPECT_THAT(Members(set), ElementsAre(5, 71));
}

}  // namespace
}  // namespace openreg
