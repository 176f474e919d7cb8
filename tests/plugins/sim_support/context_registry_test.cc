// The context registry's lock-free lookup
// (plugins/sim_support/context_registry.h): that it finds exactly the live
// contexts, and rejects a NULL, made-up, destroyed or pre-fork context, also on
// threads that found it before it was destroyed, and while other threads create
// and destroy contexts. Linked against sim_support directly, so this binary has
// its own registry.
#include "plugins/sim_support/context_registry.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "plugins/sim_support/error.h"
#include "plugins/sim_support/sim_state.h"

namespace openreg::sim {
namespace {

constexpr char kDriverName[] = "registry_test";

class TestState final : public SimState {
 public:
  explicit TestState(int32_t device_count)
      : SimState(kDriverName, device_count, /*device_memory_bytes=*/1024,
                 {/*least=*/0, /*greatest=*/0}) {}
  int32_t concurrent_streams(int32_t) const override { return 1; }
};

openreg_context NewContext(int32_t device_count = 1) {
  return RegisterContext(std::make_shared<TestState>(device_count));
}

openreg_status Destroy(openreg_context context) {
  std::shared_ptr<SimState> state;
  return UnregisterContext(context, "context_destroy", &state);
}

// The state FindState gives for `context`, or null.
SimState* Lookup(openreg_context context) {
  SimState* state = nullptr;
  if (FindState(context, "lookup", &state) != OPENREG_SUCCESS) return nullptr;
  return state;
}

// Whether FindState rejects `context` with INVALID_ARGUMENT and a message
// that mentions `fragment`.
::testing::AssertionResult Rejected(openreg_context context,
                                    const char* fragment) {
  SimState* state = nullptr;
  const openreg_status status = FindState(context, "lookup", &state);
  const std::string message = LastErrorMessage(kDriverName);
  if (status != OPENREG_ERROR_INVALID_ARGUMENT) {
    return ::testing::AssertionFailure()
           << "expected INVALID_ARGUMENT, got " << StatusName(status);
  }
  if (message.find(fragment) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "\"" << message << "\" does not mention \"" << fragment << "\"";
  }
  return ::testing::AssertionSuccess();
}

TEST(ContextRegistryTest, FindsTheStateOfALiveContext) {
  auto state = std::make_shared<TestState>(3);
  SimState* const raw = state.get();
  const openreg_context context = RegisterContext(std::move(state));
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(Lookup(context), raw);
  TestState* typed = nullptr;
  ASSERT_EQ(FindState(context, "lookup", &typed), OPENREG_SUCCESS);
  EXPECT_EQ(typed->device_count(), 3);
  EXPECT_EQ(Destroy(context), OPENREG_SUCCESS);
}

TEST(ContextRegistryTest, RejectsNullMadeUpAndMisalignedContexts) {
  const openreg_context context = NewContext();
  EXPECT_TRUE(Rejected(nullptr, "context is NULL"));
  int local = 0;
  EXPECT_TRUE(Rejected(reinterpret_cast<openreg_context>(&local),
                       "not a live context of this driver"));
  EXPECT_TRUE(Rejected(reinterpret_cast<openreg_context>(uintptr_t{1}),
                       "not a live context of this driver"));
  // Inside the registry's slots, but not the address of one.
  EXPECT_TRUE(Rejected(reinterpret_cast<openreg_context>(
                           reinterpret_cast<uintptr_t>(context) + 1),
                       "not a live context of this driver"));
  // The handle just past this one is a slot not issued yet.
  EXPECT_TRUE(Rejected(
      reinterpret_cast<openreg_context>(reinterpret_cast<uintptr_t>(context) +
                                        sizeof(void*)),
      "not a live context of this driver"));
  EXPECT_NE(Lookup(context), nullptr);
  EXPECT_EQ(Destroy(context), OPENREG_SUCCESS);
}

// Handles are never reused, also across the registry's growth: every
// destroyed one stays rejected while thousands of newer ones come and go.
TEST(ContextRegistryTest, DestroyedContextsStayDeadAndHandlesAreNeverReused) {
  absl::flat_hash_set<openreg_context> seen;
  std::vector<openreg_context> destroyed;
  for (int i = 0; i < 5000; ++i) {
    const openreg_context context = NewContext();
    ASSERT_TRUE(seen.insert(context).second) << "handle reused at " << i;
    ASSERT_NE(Lookup(context), nullptr);
    ASSERT_EQ(Destroy(context), OPENREG_SUCCESS);
    destroyed.push_back(context);
  }
  for (openreg_context context : destroyed) {
    ASSERT_TRUE(Rejected(context, "destroyed by context_destroy"));
  }
  std::shared_ptr<SimState> state;
  EXPECT_EQ(UnregisterContext(destroyed.front(), "context_destroy", &state),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(state, nullptr);
}

// A thread that found a context keeps nothing that outlives its destruction:
// once another thread destroyed it, the next lookup fails.
TEST(ContextRegistryTest, DestroyedOnOneThreadIsRejectedOnAnother) {
  const openreg_context context = NewContext();
  absl::Notification found;
  absl::Notification destroyed;
  bool found_before = false;
  bool rejected_after = false;
  std::thread other([&] {
    for (int i = 0; i < 100; ++i) found_before = Lookup(context) != nullptr;
    found.Notify();
    destroyed.WaitForNotification();
    rejected_after = Rejected(context, "destroyed by context_destroy");
  });
  found.WaitForNotification();
  ASSERT_EQ(Destroy(context), OPENREG_SUCCESS);
  destroyed.Notify();
  other.join();
  EXPECT_TRUE(found_before);
  EXPECT_TRUE(rejected_after);
}

// Threads create and destroy contexts (growing the registry) while others
// look up long-lived contexts and ones already destroyed. Run under TSan too.
TEST(ContextRegistryTest, LookupsStayRightUnderCreateDestroyChurn) {
  constexpr int kChurners = 3;
  constexpr int kLookers = 2;
  constexpr int kRounds = 2000;
  std::vector<openreg_context> stable;
  std::vector<SimState*> stable_states;
  for (int i = 0; i < 4; ++i) {
    stable.push_back(NewContext());
    stable_states.push_back(Lookup(stable.back()));
  }
  // Destroyed before the lookers start, so their death is ordered before
  // every lookup.
  std::vector<openreg_context> dead;
  for (int i = 0; i < 4; ++i) {
    dead.push_back(NewContext());
    ASSERT_EQ(Destroy(dead.back()), OPENREG_SUCCESS);
  }
  std::atomic<bool> churning{true};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kChurners; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        const openreg_context context = NewContext();
        SimState* state = Lookup(context);
        if (state == nullptr || state->device_count() != 1) ++wrong;
        if (Destroy(context) != OPENREG_SUCCESS) ++wrong;
        if (Lookup(context) != nullptr) ++wrong;
      }
    });
  }
  for (int t = 0; t < kLookers; ++t) {
    threads.emplace_back([&] {
      while (churning.load()) {
        for (size_t i = 0; i < stable.size(); ++i) {
          if (Lookup(stable[i]) != stable_states[i]) ++wrong;
        }
        for (openreg_context context : dead) {
          if (Lookup(context) != nullptr) ++wrong;
        }
      }
    });
  }
  for (int t = 0; t < kChurners; ++t) threads[t].join();
  churning.store(false);
  for (int t = kChurners; t < kChurners + kLookers; ++t) threads[t].join();
  EXPECT_EQ(wrong.load(), 0);
  for (openreg_context context : stable) {
    EXPECT_EQ(Destroy(context), OPENREG_SUCCESS);
  }
}

// Runs `child` in a forked child and expects it to exit with 0; the child's
// other exit codes say which check failed.
void ExpectChildSucceeds(int (*child)()) {
  const pid_t pid = fork();
  if (pid == 0) _exit(child());
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

openreg_context g_parent_context = nullptr;
SimState* g_parent_state = nullptr;

TEST(ContextRegistryTest, AForkedChildRejectsTheParentsContexts) {
  g_parent_context = NewContext();
  g_parent_state = Lookup(g_parent_context);
  ExpectChildSucceeds([] {
    if (!Rejected(g_parent_context, "forked")) return 10;
    std::shared_ptr<SimState> state;
    if (UnregisterContext(g_parent_context, "context_destroy", &state) !=
        OPENREG_ERROR_INVALID_ARGUMENT) {
      return 11;
    }
    const openreg_context child = NewContext(2);
    SimState* found = Lookup(child);
    if (found == nullptr || found->device_count() != 2) return 12;
    if (Destroy(child) != OPENREG_SUCCESS) return 13;
    if (!Rejected(child, "destroyed by context_destroy")) return 14;
    return 0;
  });
  // The parent is unaffected.
  EXPECT_EQ(Lookup(g_parent_context), g_parent_state);
  EXPECT_EQ(Destroy(g_parent_context), OPENREG_SUCCESS);
}

// In a child, because closing is for good.
TEST(ContextRegistryTest, AClosedRegistryRejectsEveryContext) {
  ExpectChildSucceeds([] {
    const openreg_context context = NewContext();
    SimState* state = Lookup(context);
    const std::vector<std::shared_ptr<SimState>> states =
        CloseRegistryForExit();
    if (states.size() != 1 || states[0].get() != state) return 10;
    if (!Rejected(context, "process is exiting")) return 11;
    std::shared_ptr<SimState> removed;
    if (UnregisterContext(context, "context_destroy", &removed) !=
        OPENREG_ERROR_INVALID_ARGUMENT) {
      return 12;
    }
    // Created during exit: kept, but never usable.
    if (!Rejected(NewContext(), "process is exiting")) return 13;
    return 0;
  });
}

}  // namespace
}  // namespace openreg::sim
