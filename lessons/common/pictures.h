// pictures.h: the PNG pictures lessons draw into their stream's image folder (set_image_dir;
// lesson_docs sets lessons/images/ when it refreshes the texts): plots of numbers with gnuplot,
// pictures of ideas (graphs, wiring, shapes) with Graphviz's `dot`. Each call prints the line
// "picture: images/FILE" whether or not it draws, so a lesson prints the same either way; when
// the program is missing or fails, one note goes to stderr and the lesson goes on.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "train/inspect.h"

namespace sf::lessons {

// A gnuplot script body (data blocks, labels, plot command) drawn to images/FILE.
void draw_gnuplot(std::ostream& out, const std::string& file, const std::string& body, int width = 900,
                  int height = 520);
// A Graphviz graph drawn with `dot -Tpng` to images/FILE. The DOT source is asked for only when
// the stream has an image folder, so a picture that is costly to describe (one that builds a
// GPT-2-sized model to count its parameters) costs nothing when nothing is drawn.
void draw_graphviz(std::ostream& out, const std::string& file, const std::function<std::string()>& dot_source);
// One layer of attention maps, heads side by side (train/inspect.h's heat map).
void draw_attention(std::ostream& out, const std::string& file, const AttentionMaps& maps, int64_t layer,
                    const std::string& title);
// Maps of one layer from weights (H, T, S) in row-major order, with the queries' and keys' labels.
AttentionMaps attention_maps_of(const std::vector<double>& weights, int64_t H, const std::vector<std::string>& queries,
                                const std::vector<std::string>& keys);

}  // namespace sf::lessons
