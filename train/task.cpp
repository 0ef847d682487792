// task.cpp: picks the task a config describes.
#include "train/task.h"

namespace sf {

std::unique_ptr<Task> make_task(const Config& c, const nlohmann::json& tokenizer, int64_t ranks) {
  const int64_t micro_batches = c.train.grad_accum_steps * ranks;
  if (is_seq2seq_dataset(c.data.dataset)) return make_seq2seq_task(c, micro_batches);
  return make_lm_task(c, tokenizer, micro_batches);
}

}  // namespace sf
