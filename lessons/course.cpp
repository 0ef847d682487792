// course.cpp: the course in reading order, part by part. Each lesson declares its own entry,
// `Lesson lesson_STEM()`, at the end of lessons/STEM.cpp; adding a lesson adds its LESSON line
// here, in the part and at the place where it is to be read. The lesson numbers a learner sees
// follow from this order.
#include "lessons/lesson.h"

// PART(title, title_zh, about, about_zh) starts a part; LESSON(stem) is the next lesson.
#define SF_COURSE(PART, LESSON)                                                                                    \
  PART("A model that learns", "会学习的模型",                                                                      \
       "the task and its loss, a model trained and sampled; the engine that computes gradients",                   \
       "任务与损失，训练并采样一个模型；计算梯度的引擎")                                                           \
  LESSON(task)                                                                                                     \
  LESSON(autograd)                                                                                                 \
  LESSON(broadcasting)                                                                                             \
  PART("The pieces", "模型的部件", "every module of a transformer, taken apart at initialisation",                 \
       "transformer 的每个模块，在初始化时拆开来看")                                                               \
  LESSON(embeddings)                                                                                               \
  LESSON(attention)                                                                                                \
  LESSON(scaling)                                                                                                  \
  LESSON(multihead)                                                                                                \
  LESSON(positions)                                                                                                \
  LESSON(layernorm)                                                                                                \
  LESSON(feedforward)                                                                                              \
  LESSON(encoder)                                                                                                  \
  LESSON(decoder)                                                                                                  \
  PART("Training", "训练", "the loop, a GPT trained stage by stage, Pre-LN against Post-LN, precision, many GPUs", \
       "训练循环、逐阶段训练一个 GPT、Pre-LN 与 Post-LN、数值精度、多个 GPU")                                      \
  LESSON(training)                                                                                                 \
  LESSON(build_gpt)                                                                                                \
  LESSON(prenorm)                                                                                                  \
  LESSON(mixed_precision)                                                                                          \
  LESSON(scaling_out)                                                                                              \
  PART("Looking inside", "看进模型内部", "what the heads of trained models attend to, measured",                   \
       "训练好的模型里各个头在看什么，实测")                                                                       \
  LESSON(inside)                                                                                                   \
  LESSON(heads)                                                                                                    \
  PART("Cost and scale", "代价与规模", "what attention costs in memory and time, and the ways around it",          \
       "注意力在内存和时间上的代价，以及绕开它的办法")                                                             \
  LESSON(attention_cost)                                                                                           \
  LESSON(online_softmax)                                                                                           \
  LESSON(windows)                                                                                                  \
  LESSON(kv_cache)                                                                                                 \
  LESSON(extrapolation)                                                                                            \
  PART("Chinese and the errata", "中文与勘误", "tokenizing Chinese, and the source articles checked",              \
       "中文的词元化，以及对源文章的核对")                                                                         \
  LESSON(tokenize_zh)                                                                                              \
  LESSON(errata)

namespace sf::lessons {

#define SF_NO_PART(...)
#define SF_DECLARE_LESSON(stem) Lesson lesson_##stem();
SF_COURSE(SF_NO_PART, SF_DECLARE_LESSON)

namespace {

struct Course {
  std::vector<Lesson> lessons;
  std::vector<Part> parts;
};

Course build_course() {
  Course c;
  std::vector<size_t> part_of;  // per lesson
#define SF_ADD_PART(title, title_zh, about, about_zh) c.parts.push_back({title, title_zh, about, about_zh, {}});
#define SF_ADD_LESSON(stem)             \
  c.lessons.push_back(lesson_##stem()); \
  c.lessons.back().file = #stem;        \
  part_of.push_back(c.parts.size() - 1);
  SF_COURSE(SF_ADD_PART, SF_ADD_LESSON)
  for (size_t i = 0; i < c.lessons.size(); ++i) {
    c.lessons[i].number = static_cast<int>(i + 1);
    c.lessons[i].part = static_cast<int>(part_of[i]);
  }
  // The parts point into the finished vector (it does not grow again).
  for (size_t i = 0; i < c.lessons.size(); ++i) c.parts[part_of[i]].lessons.push_back(&c.lessons[i]);
  return c;
}

const Course& course() {
  static const Course c = build_course();
  return c;
}

}  // namespace

const std::vector<Lesson>& all_lessons() { return course().lessons; }

const std::vector<Part>& course_parts() { return course().parts; }

}  // namespace sf::lessons
