// distributed.h: the few collective operations data-parallel training needs, behind one small
// interface. Built with MPI (CMake found it: SF_WITH_MPI), they are Open MPI's collectives over
// MPI_COMM_WORLD; built without, or in a process not started by mpirun, they are the
// single-process versions (rank 0 of 1: a sum over one rank is the value itself).
//
//   mpirun -np 2 scratchformer train CONFIG      two ranks, one process each
//
// Every rank runs the same training loop on its share of each global batch; the gradients are
// summed across ranks (allreduce_sum) so that every rank applies the same update.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace sf {
namespace dist {

// Whether this build has MPI (CMake found it). Without it, every function below is the
// single-process version.
bool built_with_mpi();

// Starts MPI when this process was launched by mpirun (Open MPI sets OMPI_COMM_WORLD_SIZE), so
// that a plain `scratchformer ...` never pays for MPI; a no-op otherwise. finalize() ends it.
void init(int* argc, char*** argv);
void finalize();

int rank();  // this process's rank, 0 .. size() - 1
int size();  // the number of ranks (the world size); 1 without mpirun

// values[i] = the sum of values[i] over all ranks, in place; every rank gets the same sums.
// Float64 sums of float32 gradients: for 2 ranks, rounding the float64 sum a + b to float32
// gives exactly the float32 a + b, so 2 ranks equal one process adding two micro-batches.
void allreduce_sum(std::vector<double>& values);
// Rank `root`'s bytes on every rank.
void broadcast(std::string& bytes, int root = 0);
void barrier();
// Ends every rank of the job at once with this exit code (MPI_Abort), so that one failing rank
// does not leave the others waiting in a collective; std::exit(code) without MPI.
[[noreturn]] void abort(int code);

// Sums the gradients of one optimizer step: the micro-batches of this rank, then across ranks,
// in a fixed order (micro-batch 0, 1, ... on each rank; then the float64 all-reduce), and divides
// by the number of micro-batches in the global batch:
//
//   grad = (sum over ranks r of (sum over micro-batches k of g_rk)) / (ranks * micro-batches)
//
// Each micro-batch's gradient is computed fresh (zero_grad, backward) and added here, never
// accumulated by the engine into the previous one's, so the order of additions is the same
// whether the micro-batches run in one process or on several ranks.
class GradientSum {
 public:
  explicit GradientSum(const NamedParameters& params);
  // sum += each parameter's .grad (the first micro-batch of a step is copied).
  void add_micro_batch();
  // Sums over ranks, divides by `micro_batches` (in the whole global batch) and writes the result
  // into each parameter's .grad; the next add_micro_batch starts a new step.
  void finish(int64_t micro_batches);
  // Seconds spent in the all-reduce since the start (for bench/ and the log), and before it
  // waiting for the slowest rank to finish its backward.
  double allreduce_seconds() const { return allreduce_seconds_; }
  double wait_seconds() const { return wait_seconds_; }

 private:
  NamedParameters params_;
  std::vector<float> sum_;    // every parameter's gradient, one after the other
  std::vector<double> wide_;  // the same, as float64, for the all-reduce
  bool first_ = true;
  double allreduce_seconds_ = 0, wait_seconds_ = 0;
};

}  // namespace dist
}  // namespace sf
