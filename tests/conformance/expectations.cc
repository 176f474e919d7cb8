#include "tests/conformance/expectations.h"

#include <fstream>

namespace openreg::conformance {
namespace {

constexpr char kFormat[] =
    "expected '<kind> <Suite.Test>: <reason>' with <kind> 'unsupported' or "
    "'expected_failure' and a non-empty reason";

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

bool ReadExpectations(const std::string& path,
                      std::vector<Expectation>& expectations,
                      std::string& error) {
  std::ifstream file(path);
  if (!file) {
    error = "cannot read the expectations file " + path +
            "; pass an existing file to --openreg_expectations";
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    const std::string entry = Trim(line.substr(0, line.find('#')));
    if (entry.empty()) continue;
    const size_t space = entry.find_first_of(" \t");
    const size_t colon = entry.find(':');
    const std::string kind =
        space == std::string::npos ? entry : entry.substr(0, space);
    Expectation expectation;
    if (kind == "unsupported") {
      expectation.kind = Expectation::Kind::kUnsupported;
    } else if (kind == "expected_failure") {
      expectation.kind = Expectation::Kind::kExpectedFailure;
    } else {
      error = where + ": " + kFormat + "; found kind '" + kind + "'";
      return false;
    }
    if (space == std::string::npos || colon == std::string::npos ||
        colon < space) {
      error = where + ": " + kFormat + "; found '" + entry + "'";
      return false;
    }
    expectation.pattern = Trim(entry.substr(space, colon - space));
    expectation.reason = Trim(entry.substr(colon + 1));
    expectation.where = where;
    if (expectation.pattern.find('.') == std::string::npos ||
        expectation.pattern.find_first_of(" \t") != std::string::npos ||
        expectation.reason.empty()) {
      error = where + ": " + kFormat + "; found '" + entry + "'";
      return false;
    }
    expectations.push_back(std::move(expectation));
  }
  return true;
}

bool MatchesPattern(const std::string& pattern, const std::string& name) {
  // Iterative glob with backtracking to the last '*'.
  size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

const Expectation* FindExpectation(
    const std::vector<Expectation>& expectations, const std::string& name) {
  for (const Expectation& expectation : expectations) {
    if (MatchesPattern(expectation.pattern, name)) return &expectation;
  }
  return nullptr;
}

}  // namespace openreg::conformance
