// errors.h: the exception types a user can cause. Each is caught once in the CLI's
// main and printed as one line ("error: ...") with exit code 2.
#pragma once
#include <stdexcept>
#include <string>

namespace sf {

// Base of every error a person can fix by changing their input.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Tensor shapes or dtypes that do not fit an op: the message names the op and the shapes.
struct ShapeError : Error {
  using Error::Error;
};
// An argument whose value is out of its range (a probability of 1.5, a step of 0): the message
// names the op, the argument and the value.
struct ValueError : Error {
  using Error::Error;
};
// A bad JSON config, --set override or command-line value: the message names the key path.
struct ConfigError : Error {
  using Error::Error;
};
// Missing, empty, binary or malformed data files: the message names the file.
struct DataError : Error {
  using Error::Error;
};
// Truncated, corrupt or mismatched checkpoints and weight files: the message names the tensor/file.
struct CheckpointError : Error {
  using Error::Error;
};
// A NaN/Inf found in anomaly mode or a diverging run: the message names the op or the step.
struct NumericalError : Error {
  using Error::Error;
};

}  // namespace sf
