// memory.h: where a training step's memory goes. A breakdown of the tensor buffers at one
// moment (best taken after forward, before backward, when the graph holds every activation):
// the parameters, their gradients, the optimizer's state, the activations the graph saved for
// backward by the op that made them (saved_by_op, graph.h), and the tensors nobody above
// accounts for; then the process as the OS sees it: resident memory now and at its peak, and
// what lies outside the tensors (the program and its libraries, BLAS's buffers, malloc's slack,
// the freed buffers the tensor allocator keeps for reuse).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "autograd/graph.h"

namespace sf {

struct MemoryReport {
  size_t parameters = 0;          // distinct buffers of the parameters
  size_t gradients = 0;           // their .grad buffers
  size_t gradients_resident = 0;  // the part of them in memory (a fresh zeroed buffer, see
                                  // Module::zero_grad, takes memory only as backward writes it)
  size_t optimizer_state = 0;     // e.g. AdamW's exp_avg and exp_avg_sq
  std::vector<SavedBytes> saved;
  size_t saved_total = 0;    // the sum of `saved`
  size_t other_tensors = 0;  // live tensor bytes that none of the above accounts for
  TensorMemory tensors;      // live, peak (since the last reset) and cached
  size_t rss = 0;            // resident bytes of the process now
  size_t peak_rss = 0;       // the most it has been since the process started
};

// The breakdown now, for the graph below `root` (say, the loss before backward), the model's
// parameters and the optimizer's state tensors (Optimizer::state_dict().tensors). Buffers are
// counted once each, by the first of these groups that holds them.
MemoryReport memory_report(const Tensor& root, const NamedTensors& parameters, const NamedTensors& optimizer_state);

// Resident memory of this process in bytes, now and at its peak (Linux: /proc/self/statm and
// getrusage; 0 where unknown).
size_t resident_bytes();
size_t peak_resident_bytes();

// The report as a table in MiB, one row per group and per op (ops under 0.5% of the saved total
// are summed in one row), then the process's resident memory and what lies outside the tensors.
std::string format_memory_report(const MemoryReport& report);

}  // namespace sf
