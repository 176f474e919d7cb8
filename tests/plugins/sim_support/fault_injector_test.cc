// Tests ParseFaultOptions and FaultInjector (Note [Injected faults]).
#include "plugins/sim_support/fault_injector.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/sim_support/error.h"

namespace openreg::sim {
namespace {

using ::testing::HasSubstr;

openreg_status Status(FaultPlan& plan, FaultPoint point) {
  return plan.status[static_cast<int>(point)];
}

TEST(ParseFaultOptionsTest, NoOptionsInjectNothing) {
  FaultPlan plan;
  std::string rest = "stale";
  ASSERT_EQ(ParseFaultOptions(nullptr, &plan, &rest), OPENREG_SUCCESS);
  EXPECT_EQ(rest, "");
  ASSERT_EQ(ParseFaultOptions("execution_slots=2,,", &plan, &rest),
            OPENREG_SUCCESS);
  EXPECT_EQ(rest, "execution_slots=2");
  for (openreg_status status : plan.status) EXPECT_EQ(status, OPENREG_SUCCESS);
}

TEST(ParseFaultOptionsTest, PointsWithDefaultAndExplicitStatuses) {
  FaultPlan plan;
  std::string rest;
  ASSERT_EQ(ParseFaultOptions("adversarial=1, fault_points=device_malloc+"
                              "memcpy_async:INTERNAL+event_record,"
                              "fault_rate=0.25,fault_seed=9",
                              &plan, &rest),
            OPENREG_SUCCESS)
      << LastErrorMessage("test");
  EXPECT_EQ(rest, "adversarial=1");
  EXPECT_EQ(Status(plan, FaultPoint::kDeviceMalloc),
            OPENREG_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(Status(plan, FaultPoint::kMemcpyAsync), OPENREG_ERROR_INTERNAL);
  EXPECT_EQ(Status(plan, FaultPoint::kEventRecord),
            OPENREG_ERROR_LAUNCH_FAILURE);
  EXPECT_EQ(Status(plan, FaultPoint::kHostMalloc), OPENREG_SUCCESS);
  EXPECT_EQ(plan.rate, 0.25);
  EXPECT_EQ(plan.seed, 9u);
}

void ExpectInvalid(const char* options, const char* expected) {
  SCOPED_TRACE(options);
  FaultPlan plan;
  std::string rest;
  ASSERT_EQ(ParseFaultOptions(options, &plan, &rest),
            OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(LastErrorMessage("sim"), HasSubstr(expected));
  EXPECT_THAT(LastErrorMessage("sim"), HasSubstr(options));
}

TEST(ParseFaultOptionsTest, ErrorsSayWhatIsExpected) {
  ExpectInvalid("fault_points=device_free,fault_rate=1",
                "fault_points names \"device_free\", which is not an entry "
                "point faults can be injected into; expected a '+'-separated "
                "list of device_malloc, host_malloc");
  ExpectInvalid("fault_points=device_malloc:BROKEN,fault_rate=1",
                "gives device_malloc the status \"BROKEN\"; expected "
                "INVALID_ARGUMENT, OUT_OF_MEMORY");
  ExpectInvalid("fault_points=host_malloc,fault_rate=1.5",
                "fault_rate=\"1.5\" is not valid; expected a number from 0 "
                "to 1");
  ExpectInvalid("fault_points=host_malloc,fault_rate=nan",
                "expected a number from 0 to 1");
  ExpectInvalid("fault_points=host_malloc,fault_on_call=0",
                "fault_on_call=\"0\" is not valid; expected a call number");
  ExpectInvalid("fault_points=host_malloc,fault_rate=1,fault_seed=-1",
                "fault_seed=\"-1\" is not valid; expected an unsigned");
  ExpectInvalid("fault_points=host_malloc,fault_rate=1,fault_on_call=2",
                "fault_rate and fault_on_call are both given");
  ExpectInvalid("fault_rate=0.5", "fault options without fault_points");
  ExpectInvalid("fault_points=host_malloc",
                "fault_points without fault_rate or fault_on_call");
  ExpectInvalid("fault_points=host_malloc,fault_rate=1,fault_rate=1",
                "option key \"fault_rate\" appears more than once");
  ExpectInvalid("fault_points", "option \"fault_points\" has no value");
  ExpectInvalid("fault_points=host_malloc,fault_rate=1,fault_often=1",
                "unknown fault option \"fault_often\"");
}

FaultPlan PlanFrom(const char* options) {
  FaultPlan plan;
  std::string rest;
  EXPECT_EQ(ParseFaultOptions(options, &plan, &rest), OPENREG_SUCCESS)
      << LastErrorMessage("test");
  return plan;
}

TEST(FaultInjectorTest, OnCallFailsExactlyThatCallOfEachPoint) {
  FaultInjector injector(
      PlanFrom("fault_points=device_malloc+launch_host_func,fault_on_call=3"));
  for (int call = 1; call <= 5; ++call) {
    EXPECT_EQ(injector.MaybeFail(FaultPoint::kDeviceMalloc, "device_malloc"),
              call == 3 ? OPENREG_ERROR_OUT_OF_MEMORY : OPENREG_SUCCESS);
    EXPECT_EQ(injector.MaybeFail(FaultPoint::kHostMalloc, "host_malloc"),
              OPENREG_SUCCESS);
  }
  EXPECT_EQ(injector.MaybeFail(FaultPoint::kLaunchHostFunc, "f"),
            OPENREG_SUCCESS);
  EXPECT_EQ(injector.injected(FaultPoint::kDeviceMalloc), 1u);
  EXPECT_EQ(injector.injected(FaultPoint::kHostMalloc), 0u);
}

TEST(FaultInjectorTest, MessageNamesTheFunctionStatusCallAndSeed) {
  FaultInjector injector(PlanFrom(
      "fault_points=memcpy_async:INTERNAL,fault_on_call=1,fault_seed=4"));
  ASSERT_EQ(injector.MaybeFail(FaultPoint::kMemcpyAsync, "memcpy_async"),
            OPENREG_ERROR_INTERNAL);
  EXPECT_THAT(LastErrorMessage("sim"),
              HasSubstr("memcpy_async: injected fault INTERNAL on call 1 of "
                        "memcpy_async, as the driver options ask (fault_points "
                        "names memcpy_async; fault_on_call=1)"));
  FaultInjector by_rate(
      PlanFrom("fault_points=launch_host_func,fault_rate=1,fault_seed=4"));
  ASSERT_EQ(by_rate.MaybeFail(FaultPoint::kLaunchHostFunc, "launch_host_func"),
            OPENREG_ERROR_LAUNCH_FAILURE);
  EXPECT_THAT(LastErrorMessage("sim"),
              HasSubstr("injected fault LAUNCH_FAILURE on call 1 of "
                        "launch_host_func, as the driver options ask "
                        "(fault_points names launch_host_func; fault_rate=1, "
                        "fault_seed=4)"));
}

int CountFailures(const char* options, int calls) {
  FaultInjector injector(PlanFrom(options));
  int failures = 0;
  for (int i = 0; i < calls; ++i) {
    failures += injector.MaybeFail(FaultPoint::kEventRecord, "event_record") !=
                OPENREG_SUCCESS;
  }
  EXPECT_EQ(injector.injected(FaultPoint::kEventRecord),
            static_cast<uint64_t>(failures));
  return failures;
}

TEST(FaultInjectorTest, RateIsRoughlyHonouredAndSeeded) {
  const int failures =
      CountFailures("fault_points=event_record,fault_rate=0.1", 10000);
  EXPECT_GT(failures, 800);
  EXPECT_LT(failures, 1200);
  EXPECT_EQ(CountFailures("fault_points=event_record,fault_rate=0.1", 10000),
            failures);
  EXPECT_NE(CountFailures("fault_points=event_record,fault_rate=0.1,"
                          "fault_seed=1",
                          10000),
            failures);
  EXPECT_EQ(CountFailures("fault_points=event_record,fault_rate=0", 1000), 0);
  EXPECT_EQ(CountFailures("fault_points=event_record,fault_rate=1", 1000),
            1000);
}

}  // namespace
}  // namespace openreg::sim
