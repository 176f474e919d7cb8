// A child process for threaded_sim_test: creates a context (two for the
// scenario several_contexts), leaves work queued (and threads running or
// blocked) in the way its scenario says, and returns from main without
// destroying any context, as a program using the core does. The parent
// checks that it exits with status 0, promptly.
//
//   exit_with_queued_work DRIVER_PATH SCENARIO
//
// Work queued at exit must be dropped: every host function below that starts
// after main returned exits the process with kRanAfterMain instead. Work
// running at exit must finish before static destructors run: a running item
// that sees them exits with kRanDuringStaticDestruction.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "driver_abi/openreg_driver.h"

namespace {

constexpr int kUsage = 2;
constexpr int kDriverFailed = 3;
constexpr int kRanAfterMain = 4;
constexpr int kRanDuringStaticDestruction = 5;

std::atomic<bool> g_main_returned{false};
// Items that hold their stream (HoldUntilAfterMain, Stuck) and have started.
std::atomic<int> g_holds_started{0};
std::atomic<bool> g_static_destructors_ran{false};

// Constructed before main, so destroyed after the exit handlers that
// context_create registers: it marks the start of this program's static
// destruction, and takes a while, as the destructors of large libraries do.
struct StaticDestructionSentinel {
  ~StaticDestructionSentinel() {
    g_static_destructors_ran = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
} g_sentinel;
const openreg_driver_api* g_api = nullptr;
// The context the scenario is working on.
openreg_context g_context = nullptr;

// Holds its stream until main has returned, and a little longer, so the
// work queued behind it is still queued when the exit handlers run.
openreg_status HoldUntilAfterMain(void*) {
  ++g_holds_started;
  while (!g_main_returned.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Still running during exit, using the program's static state.
  for (int i = 0; i < 100; ++i) {
    if (g_static_destructors_ran.load()) _exit(kRanDuringStaticDestruction);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return OPENREG_SUCCESS;
}

openreg_status MustNotRunAfterMain(void*) {
  if (g_main_returned.load()) _exit(kRanAfterMain);
  return OPENREG_SUCCESS;
}

// Never returns on its own: the exit handler must give up on it.
openreg_status Stuck(void*) {
  ++g_holds_started;
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

bool Check(openreg_status status, const char* what) {
  if (status == OPENREG_SUCCESS) return true;
  std::fprintf(stderr, "%s failed with status %d: %s\n", what, status,
               g_api->last_error_message(g_context));
  return false;
}

openreg_stream NewStream(int32_t device) {
  openreg_stream stream = nullptr;
  if (!Check(g_api->stream_create(g_context, device, 0, &stream),
             "stream_create")) {
    _exit(kDriverFailed);
  }
  return stream;
}

void Launch(openreg_stream stream, openreg_host_fn fn) {
  if (!Check(g_api->launch_host_func(g_context, stream, fn, nullptr),
             "launch_host_func")) {
    _exit(kDriverFailed);
  }
}

// A running item, then many queued ones, on several streams.
bool QueuedHostFunctions() {
  for (int32_t device = 0; device < 2; ++device) {
    for (int s = 0; s < 3; ++s) {
      openreg_stream stream = NewStream(device);
      Launch(stream, HoldUntilAfterMain);
      for (int i = 0; i < 50; ++i) Launch(stream, MustNotRunAfterMain);
    }
  }
  return true;
}

// Queued host functions on two contexts at once: exit stops both, within
// one join timeout.
bool SeveralContexts(const openreg_driver_config& config) {
  QueuedHostFunctions();
  if (!Check(g_api->context_create(&config, &g_context), "context_create")) {
    return false;
  }
  return QueuedHostFunctions();
}

// Streams blocked in stream_wait_event on a record that is still queued.
bool BlockedOnEvents() {
  openreg_stream producer = NewStream(0);
  openreg_event event = nullptr;
  if (!Check(g_api->event_create(g_context, 0, OPENREG_EVENT_ENABLE_TIMING,
                                 &event),
             "event_create")) {
    return false;
  }
  Launch(producer, HoldUntilAfterMain);
  Launch(producer, MustNotRunAfterMain);
  if (!Check(g_api->event_record(g_context, event, producer),
             "event_record")) {
    return false;
  }
  for (int32_t device = 0; device < 2; ++device) {
    openreg_stream consumer = NewStream(device);
    if (!Check(g_api->stream_wait_event(g_context, consumer, event),
               "stream_wait_event")) {
      return false;
    }
    Launch(consumer, MustNotRunAfterMain);
  }
  return true;
}

// Items waiting out long adversarial delays.
bool AdversarialDelays() {
  openreg_stream stream = NewStream(0);
  Launch(stream, HoldUntilAfterMain);
  for (int i = 0; i < 20; ++i) Launch(stream, MustNotRunAfterMain);
  return true;
}

// A host function that never returns: exit must not wait for it forever.
bool StuckHostFunction() {
  openreg_stream stream = NewStream(0);
  Launch(stream, Stuck);
  Launch(stream, MustNotRunAfterMain);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DRIVER_PATH SCENARIO\n", argv[0]);
    return kUsage;
  }
  const std::string scenario = argv[2];
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return kDriverFailed;
  }
  auto entry = reinterpret_cast<openreg_driver_get_api_fn>(
      dlsym(library, OPENREG_DRIVER_ENTRY_SYMBOL_NAME));
  if (entry == nullptr ||
      entry(OPENREG_DRIVER_ABI_VERSION_MAJOR, OPENREG_DRIVER_ABI_VERSION_MINOR,
            &g_api) != OPENREG_SUCCESS) {
    std::fprintf(stderr, "no driver table\n");
    return kDriverFailed;
  }
  openreg_driver_config config;
  std::memset(&config, 0, sizeof(config));
  config.struct_size = OPENREG_DRIVER_CONFIG_STRUCT_SIZE_V1_0;
  config.options = scenario == "adversarial_delays"
                       ? "adversarial=1,adversarial_max_delay_us=1000000"
                       : "";
  if (!Check(g_api->context_create(&config, &g_context), "context_create")) {
    return kDriverFailed;
  }
  bool ok = false;
  if (scenario == "queued_host_functions") {
    ok = QueuedHostFunctions();
  } else if (scenario == "several_contexts") {
    ok = SeveralContexts(config);
  } else if (scenario == "blocked_on_events") {
    ok = BlockedOnEvents();
  } else if (scenario == "adversarial_delays") {
    ok = AdversarialDelays();
  } else if (scenario == "stuck_host_function") {
    ok = StuckHostFunction();
  } else {
    std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
    return kUsage;
  }
  if (!ok) return kDriverFailed;
  // Exit while an item runs, not only while items are queued (delayed items
  // are meant to be caught in their delay).
  while (scenario != "adversarial_delays" && g_holds_started.load() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  g_main_returned = true;
  return 0;
}
