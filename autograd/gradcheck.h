// gradcheck.h: checking backward() against finite differences, the way torch.autograd.gradcheck
// does, and the registry of one check per op (and per interesting variant of each op).
//
// For f: inputs -> out, every Jacobian entry d out[o] / d x[k] is computed twice:
//   analytic: one backward() per output element o, seeded with the one-hot gradient e_o;
//   numeric:  central differences (f(x + eps e_k) - f(x - eps e_k)) / (2 eps), in float64.
// An entry passes when |analytic - numeric| <= atol + rtol |numeric| (torch's defaults:
// eps 1e-6, atol 1e-5, rtol 1e-3). The full Jacobian is compared, so a non-scalar f needs no
// projection and an error in any single entry is found and named.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace sf {

struct GradcheckOptions {
  double eps = 1e-6;   // finite-difference step
  double atol = 1e-5;  // absolute tolerance
  double rtol = 1e-3;  // relative tolerance (times |numeric|)
};

// What gradcheck found. `worst_*` describe the Jacobian entry closest to (or furthest past) the
// tolerance, on success as well as on failure.
struct GradcheckResult {
  bool ok = true;
  int64_t checked = 0;       // Jacobian entries compared
  int64_t worst_input = -1;  // which input (position in the inputs vector)
  Shape worst_index;         // its element, e.g. (1, 2)
  Shape worst_output;        // the output element, e.g. (0, 3); () for a scalar output
  double analytic = 0.0;     // d out[worst_output] / d input[worst_index] from backward()
  double numeric = 0.0;      // ... from central differences
  double worst_ratio = 0.0;  // |analytic - numeric| / (atol + rtol |numeric|); > 1 fails
  // One line, e.g. "FAIL: input 1 at (0, 2), output (1): analytic 0.5 vs numeric 0.25 ...".
  std::string describe() const;
};

// Compares backward() with central differences for every input that requires grad.
// Inputs must be float64 (ShapeError otherwise) and at least one must require grad. f must be
// deterministic (reseed any Generator inside f); it may return a tensor of any shape.
// The inputs' values are perturbed in place during the check and restored exactly afterwards;
// their .grad is left undefined.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                          GradcheckOptions options = {});

// One named gradient check, e.g. {"broadcast", "mul (2,1,4)*(3,1)", ...}. Used by the tests
// (one test per case) and by the CLI's `scratchformer gradcheck`.
struct GradcheckCase {
  std::string group, name;
  std::function<GradcheckResult()> run;
};
// Every op in ops.h and its interesting variants (broadcasting, repeated inputs, axes, flags).
std::vector<GradcheckCase> op_gradcheck_cases();

}  // namespace sf
