// sanitized.h: whether this test build runs under AddressSanitizer + UndefinedBehaviorSanitizer
// (CMake's SF_SANITIZE, which sf_add_test passes on as SF_SANITIZED). There the tests that train
// run on reduced budgets: the sanitizers check memory and undefined behaviour, which a short run
// exercises on the same code; what a model learns needs the full budget and is checked by the
// other builds.
#pragma once

namespace sf::test {

inline constexpr bool kSanitized = SF_SANITIZED;

}  // namespace sf::test
