#include "core/runtime/in_flight_work.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace openreg {
namespace {

// Starts a thread that waits for `device` and returns once it is waiting.
std::thread StartWaiter(InFlightWork& in_flight, int device,
                        std::atomic<bool>& returned) {
  const int before = in_flight.waiters();
  std::thread waiter([&in_flight, device, &returned] {
    in_flight.AwaitNoneInFlight(device);
    returned.store(true);
  });
  while (in_flight.waiters() == before) absl::SleepFor(absl::Microseconds(50));
  return waiter;
}

TEST(InFlightWorkTest, ReturnsAtOnceWithNothingInFlight) {
  InFlightWork in_flight;
  in_flight.Launched(0);
  in_flight.Done(0);
  in_flight.AwaitNoneInFlight(0);
}

TEST(InFlightWorkTest, WaitsForWorkLaunchedBeforeTheCall) {
  InFlightWork in_flight;
  in_flight.Launched(0);
  std::atomic<bool> returned{false};
  std::thread waiter = StartWaiter(in_flight, 0, returned);
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(returned.load());
  in_flight.Done(0);
  waiter.join();
  EXPECT_TRUE(returned.load());
}

// Work launched during the wait (another thread, another stream) that runs
// before the earlier work must not count in its place.
TEST(InFlightWorkTest, LaterWorkFinishingFirstDoesNotEndTheWait) {
  InFlightWork in_flight;
  in_flight.Launched(0);  // still running when the wait begins
  std::atomic<bool> returned{false};
  std::thread waiter = StartWaiter(in_flight, 0, returned);
  in_flight.Launched(0);  // launched and run during the wait
  in_flight.Done(0);
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(returned.load());
  in_flight.Done(0);  // the earlier work
  waiter.join();
  EXPECT_TRUE(returned.load());
}

TEST(InFlightWorkTest, DevicesAreCountedApart) {
  InFlightWork in_flight;
  in_flight.Launched(1);  // never done: device 0 does not wait for it
  in_flight.Launched(0);
  in_flight.Done(0);
  in_flight.AwaitNoneInFlight(0);
  in_flight.Done(1);
}

}  // namespace
}  // namespace openreg
