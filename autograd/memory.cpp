// memory.cpp: the memory breakdown of memory.h.
#include "autograd/memory.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <unordered_set>
#include <vector>

namespace sf {

namespace {
size_t allocated(size_t nbytes) { return nbytes <= 64 ? 64 : (nbytes + 63) / 64 * 64; }  // as Storage does

// The bytes of the buffers under `tensors` not yet in `seen` (which then holds them).
size_t distinct_bytes(const std::vector<Tensor>& tensors, std::unordered_set<const Storage*>& seen) {
  size_t total = 0;
  for (const Tensor& t : tensors)
    if (t.defined() && t.storage() && seen.insert(t.storage().get()).second) total += allocated(t.storage()->nbytes());
  return total;
}

std::vector<Tensor> tensors_of(const NamedTensors& named) {
  std::vector<Tensor> out;
  for (const auto& [name, t] : named) out.push_back(t);
  return out;
}

// The bytes of the pages under the buffers of `tensors` that are in memory (mincore); the whole
// buffers where the system cannot tell.
size_t resident_bytes_of(const std::vector<Tensor>& tensors) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  std::unordered_set<const Storage*> seen;
  size_t total = 0;
  for (const Tensor& t : tensors) {
    if (!t.defined() || !t.storage() || !seen.insert(t.storage().get()).second) continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(t.storage()->data()) / page * page;
    const uintptr_t end = reinterpret_cast<uintptr_t>(t.storage()->data()) + t.storage()->nbytes();
    std::vector<unsigned char> in_memory((end - begin + page - 1) / page);
    if (mincore(reinterpret_cast<void*>(begin), end - begin, in_memory.data()) != 0) {
      total += allocated(t.storage()->nbytes());
      continue;
    }
    size_t pages = 0;
    for (unsigned char flag : in_memory) pages += flag & 1;
    total += std::min(pages * page, static_cast<size_t>(allocated(t.storage()->nbytes())));
  }
  return total;
}

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }
}  // namespace

size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return pages_resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

size_t peak_resident_bytes() {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<size_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

MemoryReport memory_report(const Tensor& root, const NamedTensors& parameters, const NamedTensors& optimizer_state) {
  MemoryReport r;
  r.tensors = tensor_memory();
  std::unordered_set<const Storage*> seen;
  const std::vector<Tensor> params = tensors_of(parameters);
  r.parameters = distinct_bytes(params, seen);
  std::vector<Tensor> grads;
  for (const Tensor& p : params) grads.push_back(p.grad());
  r.gradients = distinct_bytes(grads, seen);
  r.gradients_resident = resident_bytes_of(grads);
  r.optimizer_state = distinct_bytes(tensors_of(optimizer_state), seen);
  if (root.defined()) {
    for (SavedBytes& row : saved_by_op(root)) {
      r.saved_total += row.bytes;
      r.saved.push_back(std::move(row));
    }
  }
  const size_t accounted = r.parameters + r.gradients + r.optimizer_state + r.saved_total;
  r.other_tensors = r.tensors.live > accounted ? r.tensors.live - accounted : 0;
  r.rss = resident_bytes();
  r.peak_rss = peak_resident_bytes();
  return r;
}

std::string format_memory_report(const MemoryReport& r) {
  std::string out;
  char line[160];
  auto row = [&](const std::string& what, size_t bytes, const char* note = "") {
    std::snprintf(line, sizeof line, "  %-34s %9.1f MiB%s\n", what.c_str(), mib(bytes), note);
    out += line;
  };
  out += "tensors now:\n";
  row("parameters", r.parameters);
  row("gradients", r.gradients);
  if (r.gradients_resident < r.gradients)
    row("  of them in memory", r.gradients_resident, "  (pages backward has written)");
  row("optimizer state", r.optimizer_state);
  row("saved for backward", r.saved_total);
  size_t small = 0;
  for (const SavedBytes& s : r.saved) {
    if (s.bytes * 200 < r.saved_total) {
      small += s.bytes;
      continue;
    }
    std::snprintf(line, sizeof line, "    %-32s %9.1f MiB  (%lld buffers)\n", s.op.c_str(), mib(s.bytes),
                  static_cast<long long>(s.buffers));
    out += line;
  }
  if (small > 0) {
    std::snprintf(line, sizeof line, "    %-32s %9.1f MiB\n", "other ops", mib(small));
    out += line;
  }
  row("other tensors", r.other_tensors);
  row("all live tensors", r.tensors.live);
  row("freed buffers kept for reuse", r.tensors.cached);
  out += "process:\n";
  const size_t in_tensors = r.tensors.live - (r.gradients - r.gradients_resident) + r.tensors.cached;
  row("resident now", r.rss);
  row("  outside the tensors", r.rss > in_tensors ? r.rss - in_tensors : 0,
      "  (program, libraries, BLAS buffers, malloc)");
  row("most live tensors since reset", r.tensors.peak);
  row("peak resident", r.peak_rss);
  return out;
}

}  // namespace sf
