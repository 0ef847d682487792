// Samples of a byte-level model are whole characters. A byte-level BPE model trained briefly on
// mixed Chinese and ASCII text draws, left to itself, byte tokens that cannot continue the
// character before them (a stray continuation byte, a lead byte cut short): the text shows U+FFFD
// there. With the tokens' bytes (SampleOptions::token_bytes) the sampler draws only tokens that
// keep the bytes valid UTF-8 and finishes the last character, over seeds, temperatures, top-k and
// top-p; with whole_characters off, the same model's samples do hold U+FFFD, so the check can fail.
#include <doctest/doctest.h>

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "data/bpe_tokenizer.h"
#include "data/lm_batches.h"
#include "data/utf8.h"
#include "nn/gpt.h"
#include "nn/sampling.h"
#include "optim/adam.h"
#include "optim/clip.h"

using namespace sf;

namespace {

#if defined(SF_SANITIZED) && SF_SANITIZED
constexpr int64_t kSteps = 60;  // the sanitizers are ~10x slower; a weaker model breaks more characters
#else
constexpr int64_t kSteps = 150;
#endif

// Our own mixed text: Chinese (3-byte characters), ASCII, a few 2-byte (é, ï) and 4-byte (🙂)
// characters, so every UTF-8 length occurs.
const char* const kLines[] = {
    "我们用 C++ 从零写一个 transformer，每一步都打印出来。\n",
    "第 1 课讲自动微分，第 5 课讲注意力，第 16 课讲中文的词元化。\n",
    "The model reads 64 tokens and predicts the next one.\n",
    "学习率 lr = 0.001，批大小 16，训练 200 步，损失从 4.17 降到 1.98。\n",
    "每个汉字在 UTF-8 里占 3 个字节，ASCII 字符只占 1 个。\n",
    "Attention is softmax(QK^T / sqrt(d)) V, 中文叫注意力。\n",
    "今天下雨了，我们在家里读书、写代码、喝咖啡（café）。\n",
    "GPT-2 small 有 12 层、12 个头、768 维，一共约 1.24 亿个参数。\n",
    "春天的花开了，风很轻，水很清，山上的树也绿了。\n",
    "A naïve sampler prints broken bytes; a careful one prints 🙂 whole.\n",
    "模型看不到文字，只看得到编号：我 是 6211，喜 是 559C。\n",
    "Pre-LN 把层归一化放在子层前面，Post-LN 放在残差相加之后。\n",
};

std::string training_text() {
  std::string text;
  Generator gen(7);
  const int64_t n = static_cast<int64_t>(std::size(kLines));
  for (int k = 0; k < 60; ++k) text += kLines[gen.randint(n)];
  return text;
}

struct Trained {
  std::shared_ptr<data::BpeTokenizer> tokenizer;
  std::unique_ptr<GPT> model;
};

// A small byte-level BPE model (600 tokens), trained kSteps steps.
Trained train_model() {
  const std::string text = training_text();
  REQUIRE(data::utf8_first_error(text) == -1);
  Trained t;
  t.tokenizer = std::make_shared<data::BpeTokenizer>(data::BpeTokenizer::train(text, 600));
  auto ids = std::make_shared<std::vector<int32_t>>(t.tokenizer->encode(text));
  GPTConfig c;
  c.vocab_size = t.tokenizer->vocab_size();
  c.block_size = 32;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 32;
  c.seed = 11;
  t.model = std::make_unique<GPT>(c);
  data::RandomWindows batches(ids, c.block_size, 8, 3);
  AdamOptions adam;
  adam.lr = 3e-3;
  AdamW opt(t.model->named_parameters(), adam);
  for (int64_t step = 0; step < kSteps; ++step) {
    data::LmBatch b = batches.next();
    opt.zero_grad();
    Tensor loss = cross_entropy(t.model->forward(b.inputs), b.targets);
    loss.backward();
    clip_grad_norm(t.model->named_parameters(), 1.0);
    opt.step();
  }
  return t;
}

// How many U+FFFD the text of `ids` shows when streamed as `scratchformer sample` prints it.
int replacement_chars(const data::BpeTokenizer& tok, const std::vector<int32_t>& ids) {
  data::Utf8Stream stream;
  std::string shown;
  for (int32_t id : ids) shown += stream.push(tok.decode({id}));
  shown += stream.finish();
  int n = 0;
  for (size_t at = shown.find("\xEF\xBF\xBD"); at != std::string::npos; at = shown.find("\xEF\xBF\xBD", at + 3)) ++n;
  return n;
}

struct Setting {
  double temperature;
  int64_t top_k;
  double top_p;
};
const Setting kSettings[] = {{0.0, 0, 1.0}, {0.7, 0, 1.0},  {1.0, 0, 1.0}, {1.5, 0, 1.0},
                             {2.0, 0, 1.0}, {1.0, 20, 1.0}, {1.0, 0, 0.9}};

}  // namespace

TEST_CASE("a byte-level model's samples are whole characters, and without the check they are not") {
  Trained t = train_model();
  const data::BpeTokenizer& tok = *t.tokenizer;
  const std::vector<int32_t> prompt = tok.encode("我");
  constexpr int64_t kNew = 120;
  int broken_without = 0, samples = 0;
  for (const Setting& s : kSettings)
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      SampleOptions o;
      o.max_new_tokens = kNew;
      o.temperature = s.temperature;
      o.top_k = s.top_k;
      o.top_p = s.top_p;
      o.token_bytes = data::byte_vocabulary(tok);
      REQUIRE(o.token_bytes);
      Generator gen(seed);
      std::vector<int32_t> ids = sample_gpt(*t.model, prompt, o, gen);
      std::string bytes = tok.decode(ids);
      CAPTURE(s.temperature);
      CAPTURE(s.top_k);
      CAPTURE(s.top_p);
      CAPTURE(seed);
      // Every byte valid and the last character whole: strict decoding, and no U+FFFD shown.
      CHECK(data::utf8_first_error(bytes) == -1);
      CHECK(replacement_chars(tok, ids) == 0);
      // max_new_tokens drawn, and at most 3 more to finish the last character.
      const int64_t drawn = static_cast<int64_t>(ids.size() - prompt.size());
      CHECK(drawn >= kNew);
      CHECK(drawn <= kNew + 3);
      ++samples;

      o.whole_characters = false;
      Generator again(seed);
      broken_without += replacement_chars(tok, sample_gpt(*t.model, prompt, o, again));
    }
  MESSAGE(samples << " samples of " << kNew << " tokens: no U+FFFD with whole characters, " << broken_without
                  << " without");
  CHECK(broken_without > 0);  // the model does draw broken bytes: the check above has work to do
}

TEST_CASE("whole characters hold in every row of a batch, and for a prompt cut inside a character") {
  Trained t = train_model();
  const data::BpeTokenizer& tok = *t.tokenizer;
  SampleOptions o;
  o.max_new_tokens = 40;
  o.temperature = 1.5;
  o.token_bytes = data::byte_vocabulary(tok);
  Generator gen(9);
  // Three rows at once: the rows that finish a character later are a token or three longer.
  std::vector<int32_t> start = tok.encode("\n");
  auto rows = sample_rows(*t.model, {start, start, start}, o, gen);
  for (const auto& row : rows) CHECK(data::utf8_first_error(tok.decode(row)) == -1);
  // A prompt that ends after the first byte of 我 (e6 88 91): the sample completes it.
  std::vector<int32_t> cut = tok.encode("\xE6");
  o.max_new_tokens = 10;
  std::vector<int32_t> ids = sample_gpt(*t.model, cut, o, gen);
  CHECK(data::utf8_first_error(tok.decode(ids)) == -1);
  // The vocabulary's size must match the model's.
  o.token_bytes = std::make_shared<std::vector<std::string>>(3, "a");
  CHECK_THROWS_AS(sample_gpt(*t.model, start, o, gen), ConfigError);
}
