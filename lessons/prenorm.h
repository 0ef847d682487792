// prenorm.h: what lesson prenorm returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: prenorm.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Pre-LN versus Post-LN.
struct PreNormResult {
  double loss_pre, loss_post;                             // the written-out forward
  double loss_pre_model, loss_post_model;                 // GPT::loss on the same batch
  std::vector<double> pre_hidden, post_hidden;            // mean token norm after each block
  std::vector<double> pre_hidden_grad, post_hidden_grad;  // |dL/dh| after each block
  std::vector<double> pre_param_grad, post_param_grad;    // |dL/dW| over each block's parameters
};
PreNormResult run_lesson_prenorm(std::ostream& out);

}  // namespace sf::lessons
