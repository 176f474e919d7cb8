#include "tests/conformance/driver_under_test.h"

#include <dlfcn.h>

#include <cctype>
#include <map>
#include <mutex>
#include <utility>

#include "absl/status/statusor.h"

namespace openreg::conformance {
namespace {

std::vector<DriverUnderTest>& MutableDrivers() {
  static auto* drivers = new std::vector<DriverUnderTest>;
  return *drivers;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  for (const char* affix : {"libopenreg_", ".so"}) {
    const size_t at = name.find(affix);
    if (at != std::string::npos) name.erase(at, std::string(affix).size());
  }
  return name;
}

}  // namespace

void PrintTo(const DriverUnderTest& driver, std::ostream* os) {
  *os << driver.path;
  if (!driver.options.empty())
    *os << " with options \"" << driver.options << '"';
}

void AddDriverUnderTest(std::string path) {
  MutableDrivers().push_back(DriverUnderTest{std::move(path), "", {}});
}

bool SetOptionsOfLastDriver(std::string options) {
  if (MutableDrivers().empty()) return false;
  MutableDrivers().back().options = std::move(options);
  return true;
}

bool ReadExpectationsOfLastDriver(const std::string& path, std::string& error) {
  if (MutableDrivers().empty()) {
    error = "--openreg_expectations must follow the driver it applies to";
    return false;
  }
  return ReadExpectations(path, MutableDrivers().back().expectations, error);
}

const std::vector<DriverUnderTest>& DriversUnderTest() {
  return MutableDrivers();
}

std::string DriverTestName(
    const ::testing::TestParamInfo<DriverUnderTest>& info) {
  std::string name = Basename(info.param.path);
  if (!info.param.options.empty()) name += "_" + info.param.options;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

const LoadedDriver& LoadDriver(const std::string& path) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::string, LoadedDriver>;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = loaded->try_emplace(path);
  LoadedDriver& driver = it->second;
  if (!inserted) return driver;
  absl::StatusOr<std::shared_ptr<const DriverLibrary>> library =
      DriverLibrary::Load(path);
  if (!library.ok()) {
    driver.error = std::string(library.status().message());
    return driver;
  }
  // The library is loaded (and stays so, held by `driver`): RTLD_NOLOAD only
  // finds it, to look up the entry symbol the loader called.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) {
    driver.error = std::string("dlopen(\"") + path +
                   "\", RTLD_NOLOAD) found no loaded library: " + dlerror();
    return driver;
  }
  driver.entry = reinterpret_cast<openreg_driver_get_api_fn>(
      dlsym(handle, OPENREG_DRIVER_ENTRY_SYMBOL_NAME));
  if (driver.entry == nullptr) {
    driver.error = std::string("dlsym failed: ") + dlerror();
  }
  dlclose(handle);  // drops only the reference RTLD_NOLOAD took
  if (driver.entry == nullptr) return driver;
  driver.library = *std::move(library);
  return driver;
}

}  // namespace openreg::conformance
