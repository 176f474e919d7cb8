// Per-driver conformance expectations: the tests a driver does not support
// (skipped, with the reason) and the tests it is known to fail (run; their
// failure is reported but does not fail the run, and a pass does, so a fixed
// bug cannot hide behind a stale entry).
//
// A driver keeps them in a text file, passed to the suite with
// --openreg_expectations=FILE after the driver it applies to. One entry a
// line, '#' starts a comment:
//   unsupported StreamTest.QueryIsExact: why the driver cannot do this
//   expected_failure EventTest.ElapsedTime*: the bug, and where it is tracked
// The test is "Suite.Test" as the suite names it, without the driver suffix;
// '*' matches any run of characters. Every entry needs a reason, and every
// pattern must match a test of the suite (checked by conformance_main.cc).
#ifndef OPENREG_TESTS_CONFORMANCE_EXPECTATIONS_H_
#define OPENREG_TESTS_CONFORMANCE_EXPECTATIONS_H_

#include <string>
#include <vector>

namespace openreg::conformance {

struct Expectation {
  enum class Kind { kUnsupported, kExpectedFailure };
  Kind kind;
  std::string pattern;  // "Suite.Test", may contain '*'
  std::string reason;
  std::string where;    // "FILE:LINE", for messages
};

// Reads `path`. On a malformed file returns false and sets `error` to a
// message naming the file, the line, what was expected and what was found.
bool ReadExpectations(const std::string& path,
                      std::vector<Expectation>& expectations,
                      std::string& error);

// `name` ("Suite.Test") matches `pattern` ('*' matches any run).
bool MatchesPattern(const std::string& pattern, const std::string& name);

// The first expectation matching `name`, or null.
const Expectation* FindExpectation(
    const std::vector<Expectation>& expectations, const std::string& name);

}  // namespace openreg::conformance

#endif  // OPENREG_TESTS_CONFORMANCE_EXPECTATIONS_H_
