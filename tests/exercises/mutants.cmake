# mutants.cmake: each solution with one plausible mistake, the kind a learner makes (a missing
# max subtraction, an assignment where gradients must add up, a mask that forgets the cache
# offset, ...). test_exercise_mutants links them with the same checks and requires every
# exercise to fail: a check that cannot fail would pass its mutant. Each mistake is one text
# replacement in the solution; configuring fails when the text is no longer there.
set(SF_MUTANT_DIR ${CMAKE_CURRENT_BINARY_DIR}/mutants)
set(SF_MUTANT_FILES)

function(sf_mutant stem from to)
  set(src ${PROJECT_SOURCE_DIR}/exercises/solutions/${stem}.cpp)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  file(READ ${src} text)
  string(FIND "${text}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "mutants.cmake: '${from}' is no longer in exercises/solutions/${stem}.cpp; update the mutant")
  endif()
  string(REPLACE "${from}" "${to}" text "${text}")
  set(out ${SF_MUTANT_DIR}/${stem}.cpp)
  set(old "")
  if(EXISTS ${out})
    file(READ ${out} old)
  endif()
  if(NOT old STREQUAL text)  # unchanged files keep their timestamps: no rebuild
    file(WRITE ${out} "${text}")
  endif()
  set(SF_MUTANT_FILES ${SF_MUTANT_FILES} ${out} PARENT_SCOPE)
endfunction()

sf_mutant(01_tanh_backward "dy * (1.0 - y * y)" "dy * (1.0 - y)")
sf_mutant(02_sum_to_shape "if (!ones.empty()) out = sum(out, ones, /*keepdim=*/true)" "if (ones.empty()) out = out")
sf_mutant(03_embedding_backward "dW[id * C + c] += d" "dW[id * C + c] = d")
sf_mutant(04_sinusoidal_positions "static_cast<double>(c - c % 2)" "static_cast<double>(c)")
sf_mutant(05_softmax_forward "exp(x - m)" "exp(x)")
sf_mutant(06_softmax_backward "y * (dy - sum(dy * y, {-1}, /*keepdim=*/true))" "dy * y * (1.0 - y)")
sf_mutant(07_cross_entropy "Tensor z = x - max(x, -1, /*keepdim=*/true)" "Tensor z = x")
sf_mutant(08_causal_attention "s > S - T + t" "s > t")
sf_mutant(09_online_softmax "if (score == -std::numeric_limits<double>::infinity()) return" "if (score != score) return")
sf_mutant(10_split_merge_heads "transpose(reshape(x, {B, T, H, C / H}), 1, 2)" "reshape(x, {B, H, T, C / H})")
sf_mutant(11_layer_norm_forward "mean(xc * xc, {-1}, /*keepdim=*/true)"
          "mean(x * x, {-1}, true) - mean(x, {-1}, true) * mean(x, {-1}, true)")
sf_mutant(12_layer_norm_backward " - xhat * mean(g * xhat, {-1}, true)" "")
sf_mutant(13_gelu "(1.0 + 3.0 * 0.044715 * x * x)" "(1.0 + 0.0 * x)")
sf_mutant(14_kv_cache_append "cache.k = concat({cache.k, k}, 2)" "cache.k = k")
sf_mutant(15_warmup_cosine "static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps + 1)"
          "static_cast<double>(step) / static_cast<double>(s.warmup_steps)")
sf_mutant(16_clip_grad_norm "if (c < 1.0)" "if (c == c)")
sf_mutant(17_adamw_step "c.lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + c.eps)"
          "c.lr * m[i] / (std::sqrt(v[i]) + c.eps + 0 * bc1 * bc2)")
sf_mutant(18_loss_scaling "std::isfinite(x)" "!std::isnan(x)")

add_library(sf_exercise_mutants STATIC ${SF_MUTANT_FILES})
target_link_libraries(sf_exercise_mutants PUBLIC sf_options sf::autograd sf::nn)
