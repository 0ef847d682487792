// clip.h: gradient clipping, in place on the parameters' .grad (parameters without one are
// skipped), with torch.nn.utils.clip_grad_norm_ / clip_grad_value_ semantics.
#pragma once
#include <vector>

#include "optim/optimizer.h"

namespace sf {

// The global L2 norm of all gradients, sqrt(sum over every element of g^2), accumulated in double.
double grad_norm(const NamedParameters& params);

// Scales every gradient by c = min(1, max_norm / (norm + 1e-6)), norm = grad_norm(params), and
// returns that pre-clip norm (log it; clipping happened when it exceeds max_norm). c is computed
// in float32 from the float32-rounded norm, exactly as torch does. As in torch, a
// NaN/Inf norm is returned as is and multiplies the gradients into NaN: check for non-finite
// gradients first (GradScaler does). max_norm must be > 0 (ConfigError).
double clip_grad_norm(const NamedParameters& params, double max_norm);

// Clamps every gradient element into [-clip_value, clip_value]; clip_value must be > 0.
void clip_grad_value(const NamedParameters& params, double clip_value);

}  // namespace sf
