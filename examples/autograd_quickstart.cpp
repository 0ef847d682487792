// autograd_quickstart.cpp: the first program to read. Build a tiny expression from tensors,
// let backward() compute every gradient, print them, and draw the graph.
#include <fstream>
#include <iostream>

#include "autograd/graph.h"  // backward(), to_dot()
#include "autograd/ops.h"    // every op: +, *, matmul, tanh, sum, ...

using namespace sf;

int main() {
  // A one-neuron "layer": y = tanh(x W + b), loss = sum(y^2). W and b are what we learn.
  Tensor x = Tensor::from_vector({1.0, 2.0}, {1, 2}).set_name("x");  // (1, 2) input
  Tensor W = Tensor::from_vector({0.5, -0.3, 0.1, 0.2}, {2, 2}).requires_grad_().set_name("W");
  Tensor b = Tensor::from_vector({0.1, 0.3}, {2}).requires_grad_().set_name("b");  // (2)
  Tensor y = tanh(matmul(x, W) + b);                                               // (1, 2)
  Tensor loss = sum(y * y);                                                        // ()

  std::ofstream("graph.dot") << to_dot(loss);  // draw it: dot -Tpng graph.dot -o graph.png
  loss.backward();                             // fills W.grad() and b.grad() with d loss / d W and d loss / d b
                                               // (and frees the graph: export it before, as above)
  std::cout << "loss = " << loss.item() << "\n";
  std::cout << "dloss/dW = " << W.grad() << "\n";
  std::cout << "dloss/db = " << b.grad() << "\n";
  std::cout << "wrote graph.dot\n";
}
