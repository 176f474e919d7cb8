// What threaded_sim promises beyond the driver ABI (which the conformance
// suite in tests/conformance checks): real concurrency between streams,
// execution slots and stream priorities, exact and blocking behaviour that
// the ABI leaves open, its options, its messages, and a clean process exit
// with work still queued. Loads the library with dlopen, as the core does.
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "driver_abi/openreg_driver.h"
#include "gtest/gtest.h"

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Relative to the runfiles root, the working directory of a Bazel test.
constexpr char kDriverPath[] =
    "plugins/threaded_sim/libopenreg_threaded_sim.so";
constexpr char kExitChildPath[] =
    "tests/plugins/threaded_sim/exit_with_queued_work";

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer aborts a child of a multi-threaded fork that starts a
// thread.
constexpr bool kThreadsAllowedAfterFork = false;
#else
constexpr bool kThreadsAllowedAfterFork = true;
#endif

const openreg_driver_api* Api() {
  static const openreg_driver_api* api = [] {
    const openreg_driver_api* table = nullptr;
    void* handle = dlopen(kDriverPath, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return table;
    auto entry = reinterpret_cast<openreg_driver_get_api_fn>(
        dlsym(handle, OPENREG_DRIVER_ENTRY_SYMBOL_NAME));
    if (entry == nullptr ||
        entry(OPENREG_DRIVER_ABI_VERSION_MAJOR,
              OPENREG_DRIVER_ABI_VERSION_MINOR, &table) != OPENREG_SUCCESS) {
      table = nullptr;
    }
    return table;
  }();
  return api;
}

// Where the test, on the host, reaches the bytes of device address `ptr` of
// `device`: the driver's execution view (device addresses fault).
template <typename T>
T* ExecutionView(openreg_context context, int32_t device, T* ptr) {
  intptr_t offset = 0;
  EXPECT_EQ(Api()->device_execution_offset(context, device, &offset),
            OPENREG_SUCCESS);
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(ptr) + offset);
}

openreg_driver_config Config(int32_t device_count, const char* options) {
  openreg_driver_config config;
  std::memset(&config, 0, sizeof(config));
  config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  config.device_count = device_count;
  config.device_memory_bytes = uint64_t{4} << 20;
  config.options = options;
  return config;
}

// A host function that holds its stream's worker until Release().
class Blocker {
 public:
  ~Blocker() {
    Release();
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, std::chrono::seconds(20),
                      [this] { return !launched_ || finished_; });
  }

  void Launch(openreg_context context, openreg_stream stream) {
    launched_ = true;
    ASSERT_EQ(Api()->launch_host_func(context, stream, &Blocker::Run, this),
              OPENREG_SUCCESS);
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    changed_.notify_all();
  }
  bool AwaitStarted() {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(20),
                             [this] { return started_; });
  }
  bool finished() {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }

 private:
  static openreg_status Run(void* user_data) {
    auto* blocker = static_cast<Blocker*>(user_data);
    std::unique_lock<std::mutex> lock(blocker->mu_);
    blocker->started_ = true;
    blocker->changed_.notify_all();
    const bool released = blocker->changed_.wait_for(
        lock, std::chrono::seconds(20), [blocker] { return blocker->released_; });
    blocker->finished_ = true;
    blocker->changed_.notify_all();
    return released ? OPENREG_SUCCESS : OPENREG_ERROR_INTERNAL;
  }

  std::mutex mu_;
  std::condition_variable changed_;
  bool launched_ = false;
  bool started_ = false;
  bool released_ = false;
  bool finished_ = false;
};

// Names of host functions in the order they ran.
struct RunLog {
  std::mutex mu;
  std::vector<std::string> names;
};

struct Named {
  RunLog* log;
  std::string name;
};

openreg_status AppendName(void* user_data) {
  auto* named = static_cast<Named*>(user_data);
  std::lock_guard<std::mutex> lock(named->log->mu);
  named->log->names.push_back(named->name);
  return OPENREG_SUCCESS;
}

openreg_status Count(void* counter) {
  ++*static_cast<std::atomic<int>*>(counter);
  return OPENREG_SUCCESS;
}

openreg_status ReturnInvalidDevice(void*) {
  return OPENREG_ERROR_INVALID_DEVICE;
}

int ThreadCount() {
  int count = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  while (const dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(tasks);
  return count;
}

class ThreadedSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = Api();
    ASSERT_NE(api_, nullptr) << "could not load " << kDriverPath;
  }
  void TearDown() override {
    if (context_ != nullptr) {
      EXPECT_EQ(api_->context_destroy(context_), OPENREG_SUCCESS)
          << api_->last_error_message(context_);
    }
  }

  // A new context of 2 devices of 4 MiB with `options`; fails the test if
  // there is none.
  openreg_context NewContext(const char* options) {
    const openreg_driver_config config = Config(2, options);
    openreg_context context = nullptr;
    EXPECT_EQ(api_->context_create(&config, &context), OPENREG_SUCCESS)
        << api_->last_error_message(nullptr);
    return context;
  }

  // Makes context_ a new context (see NewContext), destroyed by TearDown.
  void Init(const char* options) {
    context_ = NewContext(options);
    ASSERT_NE(context_, nullptr);
  }

  // Checks that a user thread's launch waits once `depth` items fill a
  // stream of a context made with `options`.
  void ExpectLaunchWaitsWhenFull(const char* options, int depth);

  openreg_stream NewStream(int32_t device, int32_t priority = 0) {
    openreg_stream stream = nullptr;
    EXPECT_EQ(api_->stream_create(context_, device, priority, &stream),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
    return stream;
  }

  // `actual` is `expected` and the last error of this thread, for `context`
  // (the context the call used, NULL after a failed context_create),
  // mentions every fragment.
  ::testing::AssertionResult FailsWithOn(
      openreg_context context, openreg_status expected, openreg_status actual,
      std::initializer_list<const char*> fragments) {
    const std::string message = api_->last_error_message(context);
    if (actual != expected) {
      return ::testing::AssertionFailure()
             << "expected status " << expected << ", got " << actual
             << " (last error: \"" << message << "\")";
    }
    for (const char* fragment : fragments) {
      if (message.find(fragment) == std::string::npos) {
        return ::testing::AssertionFailure()
               << "last error \"" << message << "\" does not mention \""
               << fragment << "\"";
      }
    }
    return ::testing::AssertionSuccess();
  }
  // FailsWithOn for a call on context_.
  ::testing::AssertionResult FailsWith(
      openreg_status expected, openreg_status actual,
      std::initializer_list<const char*> fragments) {
    return FailsWithOn(context_, expected, actual, fragments);
  }

  const openreg_driver_api* api_ = nullptr;
  // The context of the test, if it made one with Init.
  openreg_context context_ = nullptr;
};

// --- Identity and defaults ---------------------------------------------------

TEST_F(ThreadedSimTest, IdentityDefaultsAndProperties) {
  EXPECT_STREQ(api_->driver_name, "threaded_sim");
  EXPECT_STREQ(api_->driver_version, "2.0.0");
  // ABI 2.2 exactly.
  EXPECT_EQ(api_->abi_version_major, 2u);
  EXPECT_EQ(api_->abi_version_minor, 2u);
  EXPECT_EQ(api_->struct_size, OPENREG_DRIVER_API_STRUCT_SIZE_V2_2);
  ASSERT_EQ(api_->context_create(nullptr, &context_), OPENREG_SUCCESS)
      << api_->last_error_message(nullptr);
  int32_t count = 0;
  ASSERT_EQ(api_->get_device_count(context_, &count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 2);
  openreg_device_properties props{};
  props.struct_size = sizeof(props);
  ASSERT_EQ(api_->get_device_properties(context_, 1, &props), OPENREG_SUCCESS);
  EXPECT_STREQ(props.name, "openreg threaded_sim device");
  EXPECT_EQ(props.total_memory_bytes, uint64_t{16} << 30);
  EXPECT_EQ(props.least_stream_priority, 0);
  EXPECT_EQ(props.greatest_stream_priority, -2);
  const unsigned hardware = std::thread::hardware_concurrency();
  EXPECT_EQ(props.concurrent_streams,
            static_cast<int32_t>(hardware == 0 ? 1 : hardware));
}

TEST_F(ThreadedSimTest, ConcurrentStreamsIsTheNumberOfExecutionSlots) {
  Init("execution_slots=3");
  openreg_device_properties props{};
  props.struct_size = sizeof(props);
  ASSERT_EQ(api_->get_device_properties(context_, 0, &props), OPENREG_SUCCESS);
  EXPECT_EQ(props.concurrent_streams, 3);
}

// --- Options -----------------------------------------------------------------

TEST_F(ThreadedSimTest, AcceptsEveryDocumentedOption) {
  Init(
      " execution_slots = 4 , "
      "adversarial=1,adversarial_seed=18446744073709551615,"
      "adversarial_max_delay_us=0,idle_release_ms=0,queue_depth=2,"
      "retain_freed_memory=8MiB");
}

TEST_F(ThreadedSimTest, OptionErrorsNameTheKeyAndWhatIsValid) {
  struct Case {
    const char* options;
    std::initializer_list<const char*> fragments;
  };
  const Case cases[] = {
      {"threads=4",
       {"unknown option key \"threads\"", "valid keys: execution_slots",
        "adversarial (0 or 1)", "adversarial_seed",
        "adversarial_max_delay_us"}},
      {"execution_slots=0", {"execution_slots=\"0\"", "from 1 to 1024"}},
      {"execution_slots=1025", {"execution_slots=\"1025\""}},
      {"execution_slots=two", {"execution_slots=\"two\""}},
      {"adversarial=yes", {"adversarial=\"yes\"", "0 or 1"}},
      {"adversarial_seed=-1", {"adversarial_seed=\"-1\"", "unsigned"}},
      {"adversarial_max_delay_us=1000001",
       {"adversarial_max_delay_us", "from 0 to 1000000"}},
      {"queue_depth=1", {"queue_depth=\"1\"", "from 2 to 1048576"}},
      {"queue_depth=1048577", {"queue_depth=\"1048577\""}},
      {"execution_slots", {"\"execution_slots\"", "has no value"}},
      {"adversarial=1,adversarial=0", {"\"adversarial\"", "more than once"}},
      {"retain_freed_memory=lots",
       {"retain_freed_memory=\"lots\"", "KiB, MiB or GiB"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.options);
    const openreg_driver_config config = Config(1, c.options);
    openreg_context context = nullptr;
    EXPECT_TRUE(FailsWithOn(nullptr, OPENREG_ERROR_INVALID_ARGUMENT,
                            api_->context_create(&config, &context),
                            c.fragments));
    EXPECT_EQ(context, nullptr);
  }
}

// --- Concurrency and execution slots -----------------------------------------

// Two host functions that each wait for the other to have started: both
// succeed only if they run at the same time.
struct Rendezvous {
  std::mutex mu;
  std::condition_variable arrived;
  int present = 0;
  milliseconds timeout{10000};
};

openreg_status MeetTheOther(void* user_data) {
  auto* rendezvous = static_cast<Rendezvous*>(user_data);
  std::unique_lock<std::mutex> lock(rendezvous->mu);
  ++rendezvous->present;
  rendezvous->arrived.notify_all();
  return rendezvous->arrived.wait_for(
             lock, rendezvous->timeout,
             [rendezvous] { return rendezvous->present == 2; })
             ? OPENREG_SUCCESS
             : OPENREG_ERROR_INTERNAL;
}

TEST_F(ThreadedSimTest, WorkOnTwoStreamsOverlapsInTime) {
  Init("execution_slots=2");
  openreg_stream a = NewStream(0);
  openreg_stream b = NewStream(0);
  Rendezvous rendezvous;
  ASSERT_EQ(api_->launch_host_func(context_, a, MeetTheOther, &rendezvous),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, b, MeetTheOther, &rendezvous),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, a), OPENREG_SUCCESS)
      << api_->last_error_message(context_);
  EXPECT_EQ(api_->stream_synchronize(context_, b), OPENREG_SUCCESS)
      << api_->last_error_message(context_);
}

// Launching returns before the work runs: shown by order, with the stream
// held, not by timing (which sanitizers and a loaded machine distort).
TEST_F(ThreadedSimTest, LaunchReturnsBeforeTheWorkRuns) {
  Init("");
  openreg_stream stream = NewStream(0);
  constexpr int kItems = 20;
  Blocker blocker;
  blocker.Launch(context_, stream);
  std::atomic<int> counter{0};
  for (int i = 0; i < kItems; ++i) {
    ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
              OPENREG_SUCCESS);
  }
  // Every launch returned while the stream was held: none of the work ran.
  EXPECT_EQ(counter.load(), 0);
  EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_ERROR_NOT_READY);
  blocker.Release();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(counter.load(), kItems);
}

// Note [Queue depth]: a user thread that fills the stream waits for room;
// once the stream drains, every launch has returned and every item ran.
// `options` selects a stream depth of `depth`.
void ThreadedSimTest::ExpectLaunchWaitsWhenFull(const char* options,
                                                int depth) {
  Init(options);
  openreg_stream stream = NewStream(0);
  Blocker blocker;
  blocker.Launch(context_, stream);  // item 1 holds the stream
  const int items = depth + 6;
  std::atomic<int> returned{0};
  std::atomic<int> counter{0};
  std::thread producer([&] {
    for (int i = 0; i < items; ++i) {
      EXPECT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
                OPENREG_SUCCESS);
      ++returned;
    }
  });
  // Items 2 to `depth` fill the stream; the next launch waits for room.
  // Waiting a little longer cannot make a correct driver fail this check; a
  // driver without the bound fails it unless the producer is slower than
  // 200 ms.
  while (returned.load() < depth - 1) std::this_thread::yield();
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(returned.load(), depth - 1);
  EXPECT_EQ(counter.load(), 0);
  blocker.Release();
  producer.join();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(counter.load(), items);
}

TEST_F(ThreadedSimTest, LaunchWaitsWhileTheStreamIsFull) {
  ExpectLaunchWaitsWhenFull("queue_depth=4", 4);
}

// The default depth (docs/configuration.md).
TEST_F(ThreadedSimTest, StreamsHold256ItemsByDefault) {
  ExpectLaunchWaitsWhenFull("", 256);
}

// Several user threads waiting for room at once all get it: the worker
// wakes the lowest target, and every waiter it woke publishes its own again.
TEST_F(ThreadedSimTest, SeveralProducersWaitingForRoomAllFinish) {
  Init("queue_depth=4");
  openreg_stream stream = NewStream(0);
  Blocker blocker;
  blocker.Launch(context_, stream);
  constexpr int kProducers = 3;
  constexpr int kItemsEach = 200;
  std::atomic<int> counter{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&] {
      for (int i = 0; i < kItemsEach; ++i) {
        EXPECT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
                  OPENREG_SUCCESS);
      }
    });
  }
  blocker.Release();
  for (std::thread& producer : producers) producer.join();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(counter.load(), kProducers * kItemsEach);
}

// A host function may fill its own stream: a worker never waits for room,
// which it could only get by finishing the item it is running.
struct Refill {
  const openreg_driver_api* api;
  openreg_context context;
  openreg_stream stream;
  std::atomic<int> counter{0};
  int items = 0;
};

openreg_status EnqueueMany(void* user_data) {
  auto* refill = static_cast<Refill*>(user_data);
  for (int i = 0; i < refill->items; ++i) {
    const openreg_status status = refill->api->launch_host_func(
        refill->context, refill->stream, Count, &refill->counter);
    if (status != OPENREG_SUCCESS) return status;
  }
  return OPENREG_SUCCESS;
}

TEST_F(ThreadedSimTest, HostFunctionsFillingTheirOwnStreamDoNotWait) {
  Init("queue_depth=2");
  Refill refill{api_, context_, NewStream(0)};
  refill.items = 16;
  ASSERT_EQ(
      api_->launch_host_func(context_, refill.stream, EnqueueMany, &refill),
      OPENREG_SUCCESS);
  // A synchronize waits for the items enqueued before it: the first one
  // surely covers EnqueueMany, which enqueues every item before it returns
  // (and would never return if its launches waited for room); the items may
  // have come after that call began, so only a second one surely covers
  // them.
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(api_->stream_synchronize(context_, refill.stream),
              OPENREG_SUCCESS)
        << api_->last_error_message(context_);
  }
  EXPECT_EQ(refill.counter.load(), refill.items);
}

TEST_F(ThreadedSimTest, OneExecutionSlotRunsOneItemAtATime) {
  Init("execution_slots=1");
  openreg_stream a = NewStream(1);
  openreg_stream b = NewStream(1);
  // The rendezvous cannot happen: the first to run times out alone, then the
  // second finds it was there.
  Rendezvous rendezvous;
  rendezvous.timeout = milliseconds(200);
  ASSERT_EQ(api_->launch_host_func(context_, a, MeetTheOther, &rendezvous),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, b, MeetTheOther, &rendezvous),
            OPENREG_SUCCESS);
  const openreg_status status_a = api_->stream_synchronize(context_, a);
  const openreg_status status_b = api_->stream_synchronize(context_, b);
  EXPECT_EQ((status_a == OPENREG_ERROR_LAUNCH_FAILURE) +
                (status_b == OPENREG_ERROR_LAUNCH_FAILURE),
            1)
      << status_a << " " << status_b;
  // Slots are per device: device 0 still runs its own work.
  openreg_stream other_device = NewStream(0);
  std::atomic<int> counter{0};
  ASSERT_EQ(api_->launch_host_func(context_, other_device, Count, &counter),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(context_, other_device), OPENREG_SUCCESS);
  EXPECT_EQ(counter.load(), 1);
}

// Note [Execution slots and stream priorities] in execution_slots.h.
TEST_F(ThreadedSimTest, HigherPriorityWorkOvertakesQueuedLowerPriorityWork) {
  Init("execution_slots=1");
  openreg_stream blocker_stream = NewStream(0, 0);
  openreg_stream low_a = NewStream(0, 0);
  openreg_stream low_b = NewStream(0, 0);
  openreg_stream medium = NewStream(0, -1);
  openreg_stream high = NewStream(0, -2);
  Blocker blocker;
  blocker.Launch(context_, blocker_stream);
  // The blocker holds the only slot; everything below queues behind it.
  ASSERT_TRUE(blocker.AwaitStarted());
  RunLog log;
  Named l1{&log, "L1"}, l2{&log, "L2"}, b1{&log, "B1"}, m1{&log, "M1"},
      h1{&log, "H1"}, h2{&log, "H2"};
  ASSERT_EQ(api_->launch_host_func(context_, low_a, AppendName, &l1),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, low_a, AppendName, &l2),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, low_b, AppendName, &b1),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, medium, AppendName, &m1),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, high, AppendName, &h1),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, high, AppendName, &h2),
            OPENREG_SUCCESS);
  blocker.Release();
  ASSERT_EQ(api_->device_synchronize(context_, 0), OPENREG_SUCCESS);
  // Highest priority first; the high stream's second item asks for the slot
  // before its first one gives it back, so it keeps it. Among equal
  // priorities the oldest request wins: L2 asked only when L1 finished,
  // after B1.
  EXPECT_EQ(log.names, (std::vector<std::string>{"H1", "H2", "M1", "L1", "B1",
                                                 "L2"}));
}

// --- Exactness and blocking ----------------------------------------------------

TEST_F(ThreadedSimTest, QueryIsNotReadyWhileTheLastItemRuns) {
  Init("");
  openreg_stream stream = NewStream(0);
  Blocker blocker;
  blocker.Launch(context_, stream);
  ASSERT_TRUE(blocker.AwaitStarted());
  // The queue is empty and the item is running.
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(api_->stream_query(context_, stream), OPENREG_ERROR_NOT_READY);
  }
  blocker.Release();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_TRUE(blocker.finished());
  EXPECT_EQ(api_->stream_query(context_, stream), OPENREG_SUCCESS);
}

TEST_F(ThreadedSimTest, CopyIntoPageableMemoryBlocksButPinnedDoesNot) {
  Init("");
  openreg_stream stream = NewStream(0);
  void* device = nullptr;
  ASSERT_EQ(api_->device_malloc(context_, 0, 64, &device), OPENREG_SUCCESS);
  std::memset(ExecutionView(context_, 0, device), 0x7e, 64);
  void* pinned = nullptr;
  ASSERT_EQ(api_->host_malloc(context_, 64, &pinned), OPENREG_SUCCESS);
  std::memset(pinned, 0, 64);

  Blocker pinned_blocker;
  pinned_blocker.Launch(context_, stream);
  ASSERT_EQ(api_->memcpy_async(context_, pinned, device, 64,
                               OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_SUCCESS);
  // Returned while the stream is held: the copy is still queued.
  EXPECT_FALSE(pinned_blocker.finished());
  EXPECT_EQ(static_cast<unsigned char*>(pinned)[0], 0);
  pinned_blocker.Release();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(static_cast<unsigned char*>(pinned)[0], 0x7e);

  Blocker pageable_blocker;
  pageable_blocker.Launch(context_, stream);
  std::thread releaser([&pageable_blocker] {
    std::this_thread::sleep_for(milliseconds(100));
    pageable_blocker.Release();
  });
  std::vector<unsigned char> pageable(64, 0);
  ASSERT_EQ(api_->memcpy_async(context_, pageable.data(), device, 64,
                               OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
            OPENREG_SUCCESS);
  // Returned only after the earlier work and the copy itself.
  EXPECT_TRUE(pageable_blocker.finished());
  EXPECT_EQ(pageable[63], 0x7e);
  releaser.join();
  EXPECT_EQ(api_->host_free(context_, pinned), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
}

TEST_F(ThreadedSimTest, SmallPageableSourceIsStagedLargeOneWaits) {
  Init("");
  openreg_stream stream = NewStream(0);
  constexpr size_t kSmall = 4096;
  constexpr size_t kLarge = (size_t{1} << 20) + 1;  // past the staging limit
  void* device = nullptr;
  ASSERT_EQ(api_->device_malloc(context_, 0, kLarge, &device), OPENREG_SUCCESS);
  std::vector<unsigned char> source(kLarge, 0x5a);

  Blocker small_blocker;
  small_blocker.Launch(context_, stream);
  ASSERT_EQ(api_->memcpy_async(context_, device, source.data(), kSmall,
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  // Staged: returned while the stream is held, and the source may change.
  EXPECT_FALSE(small_blocker.finished());
  std::fill(source.begin(), source.end(), 0x11);
  small_blocker.Release();
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(ExecutionView(context_, 0,
                          static_cast<unsigned char*>(device))[kSmall - 1],
            0x5a);

  Blocker large_blocker;
  large_blocker.Launch(context_, stream);
  std::thread releaser([&large_blocker] {
    std::this_thread::sleep_for(milliseconds(100));
    large_blocker.Release();
  });
  ASSERT_EQ(api_->memcpy_async(context_, device, source.data(), kLarge,
                               OPENREG_MEMCPY_HOST_TO_DEVICE, stream),
            OPENREG_SUCCESS);
  // Copied in place: returned only after the earlier work and the copy.
  EXPECT_TRUE(large_blocker.finished());
  EXPECT_EQ(ExecutionView(context_, 0,
                          static_cast<unsigned char*>(device))[kLarge - 1],
            0x11);
  releaser.join();
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
}

// --- Failures and their messages ---------------------------------------------

TEST_F(ThreadedSimTest, StickyFailureNamesTheStatusAndLaterWorkStillRuns) {
  Init("");
  openreg_stream stream = NewStream(0);
  std::atomic<int> counter{0};
  ASSERT_EQ(api_->launch_host_func(context_, stream, ReturnInvalidDevice,
                                   nullptr),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, stream, ReturnInvalidDevice,
                                   nullptr),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
            OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_LAUNCH_FAILURE, api_->stream_synchronize(context_, stream),
      {"stream_synchronize", "host function (item 1 of stream",
       "returned status 2 (OPENREG_ERROR_INVALID_DEVICE)",
       "1 later item(s) of that stream failed too", "reported once"}));
  EXPECT_EQ(counter.load(), 2);
  EXPECT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
}

TEST_F(ThreadedSimTest, DeviceSynchronizeReportsEveryFailedStreamOnce) {
  Init("");
  openreg_stream a = NewStream(1);
  openreg_stream b = NewStream(1);
  openreg_stream destroyed = NewStream(1);
  for (openreg_stream stream : {a, b, destroyed}) {
    ASSERT_EQ(api_->launch_host_func(context_, stream, ReturnInvalidDevice,
                                     nullptr),
              OPENREG_SUCCESS);
  }
  ASSERT_EQ(api_->stream_destroy(context_, destroyed), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_LAUNCH_FAILURE,
                        api_->device_synchronize(context_, 1),
                        {"device_synchronize", "device 1",
                         "OPENREG_ERROR_INVALID_DEVICE"}));
  const std::string message = api_->last_error_message(context_);
  size_t mentions = 0;
  for (size_t at = message.find("returned status 2"); at != std::string::npos;
       at = message.find("returned status 2", at + 1)) {
    ++mentions;
  }
  EXPECT_EQ(mentions, 3u) << message;
  EXPECT_EQ(api_->device_synchronize(context_, 1), OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_query(context_, a), OPENREG_SUCCESS);
}

TEST_F(ThreadedSimTest, InvalidDevicePointersNameTheAllocationBounds) {
  Init("");
  openreg_stream stream = NewStream(0);
  char* device = nullptr;
  ASSERT_EQ(api_->device_malloc(context_, 0, 1024,
                                reinterpret_cast<void**>(&device)),
            OPENREG_SUCCESS);
  std::vector<char> host(200);
  EXPECT_TRUE(FailsWith(
      OPENREG_ERROR_INVALID_ARGUMENT,
      api_->memcpy_async(context_, host.data(), device + 1000, 100,
                         OPENREG_MEMCPY_DEVICE_TO_HOST, stream),
      {"memcpy_async", "src range", "+100 bytes", "+1024 bytes", "device 0",
       "by 76 bytes"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->memset_async(context_, host.data(), 0, 8, stream),
                        {"memset_async", "not inside any live device "
                                         "allocation"}));
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
}

// Waits the ABI forbids inside a host function fail instead of deadlocking.
TEST_F(ThreadedSimTest, HostFunctionsCannotWaitForTheirOwnStream) {
  Init("");
  struct SelfWait {
    const openreg_driver_api* api;
    openreg_context context;
    openreg_stream stream;
    openreg_status synchronize = OPENREG_SUCCESS;
    openreg_status device_synchronize = OPENREG_SUCCESS;
    openreg_status pageable_copy = OPENREG_SUCCESS;
    std::string message;
  } self{api_, context_, NewStream(0)};
  void* device = nullptr;
  ASSERT_EQ(api_->device_malloc(context_, 0, 8, &device), OPENREG_SUCCESS);
  static void* s_device = nullptr;
  s_device = device;
  ASSERT_EQ(api_->launch_host_func(
                context_, self.stream,
                [](void* user_data) -> openreg_status {
                  auto* s = static_cast<SelfWait*>(user_data);
                  s->synchronize =
                      s->api->stream_synchronize(s->context, s->stream);
                  s->message = s->api->last_error_message(s->context);
                  s->device_synchronize =
                      s->api->device_synchronize(s->context, 0);
                  char pageable[8];
                  s->pageable_copy = s->api->memcpy_async(
                      s->context, pageable, s_device, 8,
                      OPENREG_MEMCPY_DEVICE_TO_HOST, s->stream);
                  return OPENREG_SUCCESS;
                },
                &self),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, self.stream), OPENREG_SUCCESS);
  EXPECT_EQ(self.synchronize, OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(self.message.find("would wait for itself forever"),
            std::string::npos)
      << self.message;
  EXPECT_EQ(self.device_synchronize, OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(self.pageable_copy, OPENREG_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
}

// --- Adversarial mode ----------------------------------------------------------

TEST_F(ThreadedSimTest, AdversarialModeDelaysEveryItem) {
  Init("adversarial=1,adversarial_seed=3,adversarial_max_delay_us=20000");
  openreg_stream stream = NewStream(0);
  std::atomic<int> counter{0};
  constexpr int kItems = 20;
  for (int i = 0; i < kItems; ++i) {
    ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
              OPENREG_SUCCESS);
  }
  const auto enqueued = steady_clock::now();
  // Work still pending when the launches returned (the delays sum to about
  // 200 ms; launching takes microseconds, even under a sanitizer).
  EXPECT_LT(counter.load(), kItems);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  const auto finished = steady_clock::now();
  EXPECT_EQ(counter.load(), kItems);
  // 20 delays uniform in [0, 20 ms] sum to 200 ms on average; a lower bound
  // only grows safer on a loaded machine.
  EXPECT_GT(finished - enqueued, milliseconds(60));
}

TEST_F(ThreadedSimTest, AdversarialModeExposesAMissingSynchronization) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "reads device memory without synchronizing, on purpose: the "
                  "data race ThreadSanitizer rightly reports";
#endif
  Init("adversarial=1,adversarial_seed=11,adversarial_max_delay_us=20000");
  openreg_stream stream = NewStream(0);
  unsigned char* device = nullptr;
  ASSERT_EQ(api_->device_malloc(context_, 0, 16,
                                reinterpret_cast<void**>(&device)),
            OPENREG_SUCCESS);
  const unsigned char* execution = ExecutionView(context_, 0, device);
  int stale = 0;
  constexpr int kTrials = 10;
  for (int trial = 1; trial <= kTrials; ++trial) {
    ASSERT_EQ(api_->memset_async(context_, device, trial, 16, stream),
              OPENREG_SUCCESS);
    // The bug under test: reading without stream_synchronize.
    if (execution[15] != trial) ++stale;
    ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
    ASSERT_EQ(execution[15], trial);
  }
  EXPECT_GE(stale, kTrials - 2);
  EXPECT_EQ(api_->device_free(context_, 0, device), OPENREG_SUCCESS);
}

// --- Worker threads and process lifetime ---------------------------------------

TEST_F(ThreadedSimTest, WorkersStartLazilyAndDestroyedStreamsReleaseThem) {
  Init("");
  const int baseline = ThreadCount();
  std::vector<openreg_stream> streams;
  for (int i = 0; i < 40; ++i) streams.push_back(NewStream(i % 2));
  EXPECT_EQ(ThreadCount(), baseline);
  std::atomic<int> counter{0};
  for (openreg_stream stream : streams) {
    ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
              OPENREG_SUCCESS);
  }
  EXPECT_EQ(ThreadCount(), baseline + 40);
  for (openreg_stream stream : streams) {
    ASSERT_EQ(api_->stream_destroy(context_, stream), OPENREG_SUCCESS);
  }
  EXPECT_EQ(api_->device_synchronize(context_, 0), OPENREG_SUCCESS);
  EXPECT_EQ(api_->device_synchronize(context_, 1), OPENREG_SUCCESS);
  EXPECT_EQ(counter.load(), 40);
  // Drained workers exit; creating or destroying a stream joins them.
  const auto deadline = steady_clock::now() + std::chrono::seconds(10);
  while (ThreadCount() != baseline && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
    for (int32_t device : {0, 1}) {
      ASSERT_EQ(api_->stream_destroy(context_, NewStream(device)),
                OPENREG_SUCCESS);
    }
  }
  EXPECT_EQ(ThreadCount(), baseline);
}

TEST_F(ThreadedSimTest, ContextDestroyWakesWorkersWaitingForEvents) {
  Init("");
  openreg_stream producer = NewStream(0);
  openreg_stream consumer = NewStream(1);
  openreg_event event = nullptr;
  ASSERT_EQ(api_->event_create(context_, 0, 0, &event), OPENREG_SUCCESS);
  Blocker blocker;
  blocker.Launch(context_, producer);
  ASSERT_EQ(api_->event_record(context_, event, producer), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_wait_event(context_, consumer, event),
            OPENREG_SUCCESS);
  std::atomic<int> counter{0};
  ASSERT_EQ(api_->launch_host_func(context_, consumer, Count, &counter),
            OPENREG_SUCCESS);
  ASSERT_TRUE(blocker.AwaitStarted());
  std::thread releaser([&blocker] {
    std::this_thread::sleep_for(milliseconds(100));
    blocker.Release();
  });
  const auto start = steady_clock::now();
  EXPECT_EQ(api_->context_destroy(std::exchange(context_, nullptr)),
            OPENREG_SUCCESS);
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(3));
  releaser.join();
  // The record was dropped with the queue, so the waiting stream never ran
  // its work.
  EXPECT_EQ(counter.load(), 0);
}

// Runs exit_with_queued_work SCENARIO in a child process; returns its wait
// status, or -1 if it had to be killed after `timeout`. `extra_environment`
// ("NAME=value" entries) overrides the child's environment.
int RunExitChild(const char* scenario, std::chrono::seconds timeout,
                 milliseconds* took,
                 const std::vector<std::string>& extra_environment = {}) {
  // Built before fork: the child only calls exec.
  std::vector<std::string> environment = extra_environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string inherited = *entry;
    const std::string name = inherited.substr(0, inherited.find('=') + 1);
    bool overridden = false;
    for (const std::string& extra : extra_environment) {
      overridden = overridden || extra.compare(0, name.size(), name) == 0;
    }
    if (!overridden) environment.push_back(inherited);
  }
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const char* argv[] = {kExitChildPath, kDriverPath, scenario, nullptr};
  const auto start = steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execve(kExitChildPath, const_cast<char* const*>(argv), envp.data());
    _exit(127);
  }
  if (pid < 0) return -2;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (steady_clock::now() - start > timeout) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  *took = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
  return status;
}

TEST_F(ThreadedSimTest, ProcessExitsCleanlyWithWorkStillQueued) {
  for (const char* scenario :
       {"queued_host_functions", "several_contexts", "blocked_on_events",
        "adversarial_delays"}) {
    SCOPED_TRACE(scenario);
    milliseconds took{0};
    const int status = RunExitChild(scenario, std::chrono::seconds(30), &took);
    ASSERT_NE(status, -1) << "the child hung at exit";
    ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal "
                                   << (WIFSIGNALED(status) ? WTERMSIG(status)
                                                           : 0);
    // 4: queued work ran after main returned instead of being dropped;
    // 5: running work was still running when static destructors ran.
    EXPECT_EQ(WEXITSTATUS(status), 0);
    // Well under the join timeout: nothing was waited for but running items.
    EXPECT_LT(took, milliseconds(4000));
  }
}

TEST_F(ThreadedSimTest, ProcessExitGivesUpOnAStuckHostFunction) {
  milliseconds took{0};
  // The stuck worker is still running when the process ends, which is the
  // point. Under ASan, LeakSanitizer's exit-time scan crashes on that
  // thread's dynamic TLS (a gcc 12 libasan bug with glibc >= 2.34), so this
  // child alone runs without the leak check; builds without ASan ignore it.
  const char* asan_options = std::getenv("ASAN_OPTIONS");
  const int status = RunExitChild(
      "stuck_host_function", std::chrono::seconds(60), &took,
      {std::string("ASAN_OPTIONS=") +
       (asan_options != nullptr ? asan_options : "") + ":detect_leaks=0"});
  ASSERT_NE(status, -1) << "the child hung at exit";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // It waited the driver's join timeout (5 s) for the stuck item, no more.
  EXPECT_LT(took, std::chrono::seconds(20));
}

TEST_F(ThreadedSimTest, ForkedChildCannotUseTheParentsContexts) {
  Init("");
  openreg_context other = NewContext("");
  openreg_stream stream = NewStream(0);
  std::atomic<int> counter{0};
  ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  // A worker of the other context is busy, holding its locks, at the fork.
  openreg_stream busy = nullptr;
  ASSERT_EQ(api_->stream_create(other, 0, 0, &busy), OPENREG_SUCCESS);
  Blocker blocker;
  blocker.Launch(other, busy);
  ASSERT_TRUE(blocker.AwaitStarted());
  const pid_t pid = fork();
  if (pid == 0) {
    // The child: the parent's streams have no workers here. Every call on a
    // parent context fails at once, without waiting for them.
    int32_t count = 0;
    for (openreg_context parent : {context_, other}) {
      if (api_->get_device_count(parent, &count) !=
          OPENREG_ERROR_INVALID_ARGUMENT) {
        _exit(10);
      }
      if (std::strstr(api_->last_error_message(parent), "forked") ==
          nullptr) {
        _exit(11);
      }
    }
    if (api_->stream_synchronize(other, busy) !=
            OPENREG_ERROR_INVALID_ARGUMENT ||
        api_->context_destroy(context_) != OPENREG_ERROR_INVALID_ARGUMENT) {
      _exit(12);
    }
    if (!kThreadsAllowedAfterFork) _exit(0);
    const openreg_driver_config config = Config(1, "");
    openreg_context child = nullptr;
    if (api_->context_create(&config, &child) != OPENREG_SUCCESS) _exit(13);
    openreg_stream child_stream = nullptr;
    std::atomic<int> child_counter{0};
    if (api_->stream_create(child, 0, 0, &child_stream) != OPENREG_SUCCESS ||
        api_->launch_host_func(child, child_stream, Count, &child_counter) !=
            OPENREG_SUCCESS ||
        api_->stream_synchronize(child, child_stream) != OPENREG_SUCCESS ||
        child_counter.load() != 1 ||
        api_->context_destroy(child) != OPENREG_SUCCESS) {
      _exit(14);
    }
    _exit(0);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // The parent is unaffected.
  blocker.Release();
  ASSERT_EQ(api_->stream_synchronize(other, busy), OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(counter.load(), 2);
  EXPECT_EQ(api_->context_destroy(other), OPENREG_SUCCESS);
}

// --- Several contexts ------------------------------------------------------

// Each context has its own devices and execution slots: with one slot each,
// work of two contexts still runs at the same time.
TEST_F(ThreadedSimTest, StreamsOfTwoContextsRunConcurrently) {
  openreg_context a = NewContext("execution_slots=1");
  openreg_context b = NewContext("execution_slots=1");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  openreg_stream on_a = nullptr;
  openreg_stream on_b = nullptr;
  ASSERT_EQ(api_->stream_create(a, 0, 0, &on_a), OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_create(b, 0, 0, &on_b), OPENREG_SUCCESS);
  Rendezvous rendezvous;
  ASSERT_EQ(api_->launch_host_func(a, on_a, MeetTheOther, &rendezvous),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->launch_host_func(b, on_b, MeetTheOther, &rendezvous),
            OPENREG_SUCCESS);
  EXPECT_EQ(api_->stream_synchronize(a, on_a), OPENREG_SUCCESS)
      << api_->last_error_message(a);
  EXPECT_EQ(api_->stream_synchronize(b, on_b), OPENREG_SUCCESS)
      << api_->last_error_message(b);
  EXPECT_EQ(api_->context_destroy(a), OPENREG_SUCCESS);
  EXPECT_EQ(api_->context_destroy(b), OPENREG_SUCCESS);
}

TEST_F(ThreadedSimTest, ContextsKeepTheirOwnMemoryAndHandles) {
  Init("");
  const openreg_driver_config small = Config(1, "");
  openreg_context other = nullptr;
  ASSERT_EQ(api_->context_create(&small, &other), OPENREG_SUCCESS);
  int32_t count = 0;
  ASSERT_EQ(api_->get_device_count(other, &count), OPENREG_SUCCESS);
  EXPECT_EQ(count, 1);
  // Filling the other context's device leaves this one's free.
  void* filled = nullptr;
  ASSERT_EQ(api_->device_malloc(other, 0, uint64_t{4} << 20, &filled),
            OPENREG_SUCCESS);
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  ASSERT_EQ(api_->mem_get_info(context_, 0, &free_bytes, &total_bytes),
            OPENREG_SUCCESS);
  EXPECT_EQ(free_bytes, total_bytes);
  openreg_pointer_attributes attributes{};
  attributes.struct_size = sizeof(attributes);
  ASSERT_EQ(api_->pointer_get_attributes(context_, filled, &attributes),
            OPENREG_SUCCESS);
  EXPECT_EQ(attributes.memory_type, OPENREG_MEMORY_TYPE_UNREGISTERED);
  // A handle of one context is rejected by the other.
  openreg_stream foreign = nullptr;
  openreg_event foreign_event = nullptr;
  ASSERT_EQ(api_->stream_create(other, 0, 0, &foreign), OPENREG_SUCCESS);
  ASSERT_EQ(api_->event_create(other, 0, 0, &foreign_event), OPENREG_SUCCESS);
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->stream_query(context_, foreign),
                        {"not a live stream of this context",
                         "belongs to another context"}));
  EXPECT_TRUE(FailsWith(OPENREG_ERROR_INVALID_ARGUMENT,
                        api_->event_query(context_, foreign_event),
                        {"not a live event of this context"}));
  // Destroying the other context, with work queued, leaves this one working.
  Blocker blocker;
  blocker.Launch(other, foreign);
  std::atomic<int> dropped{0};
  ASSERT_EQ(api_->launch_host_func(other, foreign, Count, &dropped),
            OPENREG_SUCCESS);
  ASSERT_TRUE(blocker.AwaitStarted());
  std::thread releaser([&blocker] {
    std::this_thread::sleep_for(milliseconds(100));
    blocker.Release();
  });
  ASSERT_EQ(api_->context_destroy(other), OPENREG_SUCCESS);
  releaser.join();
  EXPECT_EQ(dropped.load(), 0);
  EXPECT_TRUE(FailsWithOn(other, OPENREG_ERROR_INVALID_ARGUMENT,
                          api_->stream_query(other, foreign),
                          {"stream_query", "not a live context",
                           "destroyed by context_destroy"}));
  openreg_stream stream = NewStream(1);
  std::atomic<int> counter{0};
  ASSERT_EQ(api_->launch_host_func(context_, stream, Count, &counter),
            OPENREG_SUCCESS);
  ASSERT_EQ(api_->stream_synchronize(context_, stream), OPENREG_SUCCESS);
  EXPECT_EQ(counter.load(), 1);
}

TEST_F(ThreadedSimTest, NullContextIsRejectedWithAMessage) {
  int32_t count = 0;
  EXPECT_TRUE(FailsWithOn(nullptr, OPENREG_ERROR_INVALID_ARGUMENT,
                          api_->get_device_count(nullptr, &count),
                          {"threaded_sim: get_device_count",
                           "context is NULL"}));
  EXPECT_TRUE(FailsWithOn(nullptr, OPENREG_ERROR_INVALID_ARGUMENT,
                          api_->launch_host_func(nullptr, nullptr, Count,
                                                 nullptr),
                          {"launch_host_func", "context is NULL"}));
  EXPECT_TRUE(FailsWithOn(nullptr, OPENREG_ERROR_INVALID_ARGUMENT,
                          api_->context_destroy(nullptr),
                          {"context_destroy", "context is NULL"}));
}

}  // namespace
