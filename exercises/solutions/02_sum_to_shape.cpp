// Reference solution of exercise 2 (spoiler): reducing a gradient over broadcast dimensions.
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor sum_to_shape(const Tensor& g, const Shape& shape) {
  const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  if (lead < 0)
    throw ShapeError("sum_to_shape: cannot reduce " + shape_str(g.shape()) + " to the longer " + shape_str(shape));
  Tensor out = g;
  if (lead > 0) {  // axes broadcasting prepended: sum them away
    std::vector<int64_t> axes;
    for (int64_t a = 0; a < lead; ++a) axes.push_back(a);
    out = sum(out, axes);
  }
  std::vector<int64_t> ones;  // axes where the input had size 1 and was stretched
  for (size_t a = 0; a < shape.size(); ++a)
    if (shape[a] == 1 && out.size(static_cast<int64_t>(a)) != 1) ones.push_back(static_cast<int64_t>(a));
  if (!ones.empty()) out = sum(out, ones, /*keepdim=*/true);
  return out;
}

}  // namespace sf::exercise
