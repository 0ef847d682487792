// pictures.h: the PNG pictures lessons draw, with gnuplot, into their stream's image folder
// (set_image_dir; lesson_docs sets lessons/images/ when it refreshes the texts). Each call prints
// the line "picture: images/FILE" whether or not it draws, so a lesson prints the same either way;
// when gnuplot is missing or fails, one note goes to stderr and the lesson goes on.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/inspect.h"

namespace sf::lessons {

// A gnuplot script body (data blocks, labels, plot command) drawn to images/FILE.
void draw_gnuplot(std::ostream& out, const std::string& file, const std::string& body, int width = 900,
                  int height = 520);
// One layer of attention maps, heads side by side (experiments/inspect.h's heat map).
void draw_attention(std::ostream& out, const std::string& file, const AttentionMaps& maps, int64_t layer,
                    const std::string& title);
// Maps of one layer from weights (H, T, S) in row-major order, with the queries' and keys' labels.
AttentionMaps attention_maps_of(const std::vector<double>& weights, int64_t H, const std::vector<std::string>& queries,
                                const std::vector<std::string>& keys);

}  // namespace sf::lessons
