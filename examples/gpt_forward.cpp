// gpt_forward.cpp: build a small GPT, run one forward and backward pass, print the model.
//
// Legend: B batch, T time, V vocab.
#include <iostream>

#include "autograd/ops.h"
#include "nn/gpt.h"

int main() {
  // A character-level model the size of nanoGPT's Shakespeare example, but smaller.
  sf::GPTConfig config;
  config.vocab_size = 65;
  config.block_size = 32;
  config.n_layer = 2;
  config.n_head = 4;
  config.n_embd = 64;
  config.pos_encoding = sf::PosEncoding::learned;  // or sinusoidal, rope, alibi, none
  sf::GPT model(config);
  std::cout << model.summary();

  // Two sequences of 8 token ids, and the next-token targets (the same ids shifted by one).
  sf::IntTensor idx({2, 8}, {1, 2, 3, 4, 5, 6, 7, 8, 10, 20, 30, 40, 50, 60, 0, 1});
  sf::IntTensor targets({2, 8}, {2, 3, 4, 5, 6, 7, 8, 9, 20, 30, 40, 50, 60, 0, 1, 2});
  sf::Tensor logits = model.forward(idx);  // (B, T, V) = (2, 8, 65)
  sf::Tensor loss = sf::cross_entropy(logits, targets);
  loss.backward();  // fills every parameter's .grad

  std::cout << "logits shape " << sf::shape_str(logits.shape()) << "\n";
  std::cout << "loss " << loss.item() << " (ln 65 = 4.17 for a uniform guess)\n";
  std::cout << "grad of lm_head.weight (tied to wte): "
            << sf::shape_str(model.parameter("lm_head.weight").grad().shape()) << "\n";
  return 0;
}
