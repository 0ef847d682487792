// task.cpp: picks the task a config describes.
#include "experiments/task.h"

namespace sf {

std::unique_ptr<Task> make_task(const Config& c, const nlohmann::json& tokenizer) {
  if (is_seq2seq_dataset(c.data.dataset)) return make_seq2seq_task(c, tokenizer);
  return make_lm_task(c, tokenizer);
}

}  // namespace sf
