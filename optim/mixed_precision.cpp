// mixed_precision.cpp: one iteration's scale -> backward -> unscale/check -> step -> update.
#include "optim/mixed_precision.h"

#include "autograd/json_int.h"

namespace sf {

static GradScalerOptions default_scaler(Precision p) {
  GradScalerOptions o;
  o.enabled = p == Precision::fp16;
  return o;
}

MixedPrecision::MixedPrecision(Precision precision) : MixedPrecision(precision, default_scaler(precision)) {}

MixedPrecision::MixedPrecision(Precision precision, const GradScalerOptions& scaler)
    : precision_(precision), scaler_(scaler) {}

void MixedPrecision::backward(const Tensor& loss) const {
  AutocastGuard guard(precision_);
  scaler_.scale_loss(loss).backward();
}

const StepStats& MixedPrecision::unscale_and_check(const NamedParameters& params) {
  last_ = StepStats{};
  last_.loss_scale = scaler_.scale();
  const UnscaleStats& u = scaler_.unscale(params);
  last_.grad_elements = u.elements;
  last_.zero_elements = u.zeros;
  last_.nonfinite_elements = u.nonfinite;
  last_.underflow_fraction = u.zero_fraction();
  last_.overflow = u.found_inf();
  checked_ = true;
  return last_;
}

bool MixedPrecision::step(Optimizer& optimizer) {
  if (!checked_) unscale_and_check(optimizer.params());
  const bool stepped = scaler_.step(optimizer);
  last_.skipped = !stepped;
  return stepped;
}

void MixedPrecision::update() {
  scaler_.update();
  if (last_.overflow) ++overflow_events_;
  if (last_.skipped) ++skipped_steps_;
  checked_ = false;
}

nlohmann::json MixedPrecision::state_dict() const {
  return {{"precision", precision_name(precision_)},
          {"scaler", scaler_.state_dict()},
          {"overflow_events", overflow_events_},
          {"skipped_steps", skipped_steps_}};
}

void MixedPrecision::load_state_dict(const nlohmann::json& s) {
  for (const char* key : {"precision", "scaler", "overflow_events", "skipped_steps"})
    if (!s.is_object() || !s.contains(key))
      throw CheckpointError(std::string("mixed precision state: missing '") + key + "'");
  if (!s.at("precision").is_string() || s.at("precision").get<std::string>() != precision_name(precision_))
    throw CheckpointError("mixed precision state: the checkpoint was trained in " + s.at("precision").dump() +
                          ", the config asks for \"" + precision_name(precision_) + "\"");
  for (const char* key : {"overflow_events", "skipped_steps"})
    if (!json_int(s.at(key), 0))
      throw CheckpointError(std::string("mixed precision state: '") + key + "' must be an integer >= 0, got " +
                            s.at(key).dump());
  scaler_.load_state_dict(s.at("scaler"));
  overflow_events_ = *json_int(s.at("overflow_events"), 0);
  skipped_steps_ = *json_int(s.at("skipped_steps"), 0);
  checked_ = false;
}

}  // namespace sf
