// Lesson 25: tokenizing Chinese. 我喜欢苹果 and the Tang poems (dataset "tang") as characters,
// as UTF-8 bytes, and as byte-level BPE tokens learned on the poems; then what a bigger
// vocabulary buys (shorter sequences) and what it costs (a bigger embedding table).
// Text: tokenize_zh.md, zh/tokenize_zh.md.
#include <cstdio>
#include <ostream>

#include "autograd/errors.h"
#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"
#include "data/fortune_poems.h"
#include "data/utf8.h"
#include "lessons/lesson.h"
#include "lessons/tokenize_zh.h"

namespace sf::lessons {

using data::BpeTokenizer;
using data::CharTokenizer;

// "e6 88 91": the bytes of a string in hex.
static std::string hex_bytes(const std::string& s) {
  std::string h;
  char buf[4];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    if (!h.empty()) h += ' ';
    h += buf;
  }
  return h;
}

// A token as a reader sees it: its text when its bytes are whole characters, else its bytes.
static std::string show_token(const std::string& bytes) {
  if (bytes == "\n") return "'\\n'";
  std::string shown(1, data::utf8_first_error(bytes) < 0 ? '\'' : '<');
  shown += data::utf8_first_error(bytes) < 0 ? bytes : hex_bytes(bytes);
  shown += shown[0] == '<' ? '>' : '\'';
  return shown;
}

static int64_t count_chars(const std::string& s) { return static_cast<int64_t>(data::utf8_decode(s, "poems").size()); }

// True when `bytes` is UTF-8 for n >= 1 characters, all CJK ideographs (U+4E00..U+9FFF).
static bool ideographs(const std::string& bytes, int64_t n) {
  if (data::utf8_first_error(bytes) >= 0) return false;
  std::vector<char32_t> cps = data::utf8_decode(bytes);
  for (char32_t cp : cps)
    if (cp < 0x4E00 || cp > 0x9FFF) return false;
  return n == 0 ? !cps.empty() : static_cast<int64_t>(cps.size()) >= n;
}

// How many times `needle` occurs in `text`.
static int64_t occurrences(const std::string& text, const std::string& needle) {
  int64_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + needle.size())) ++n;
  return n;
}

// Step 1: one token per character.
static void zh_characters(std::ostream& out, TokenizeZhResult& r, const std::string& sentence) {
  heading(out, 1, "Characters: 我喜欢苹果 is five tokens", "按字切分：“我喜欢苹果”是五个词元");
  // [excerpt: chars]
  std::vector<char32_t> cps = data::utf8_decode(sentence);  // one token per code point
  // [/excerpt]
  for (char32_t cp : cps) {
    std::string ch;
    data::utf8_append(cp, ch);
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
    out << "  " << ch << "  " << buf << "\n";
    r.sentence_chars.push_back(ch);
  }
  out << tr(out,
            "5 characters, 5 tokens: 喜欢 (to like) is two tokens, 喜 and 欢, and 苹果 (apple)\n"
            "is 苹 and 果. Lesson 5 (attention) and article 003 split the sentence into the\n"
            "three words 我 / 喜欢 / 苹果: a word segmenter's split, which a character-level\n"
            "model never sees. It has to learn from data that 喜 and 欢 belong together.\n",
            "5 个字，5 个词元：“喜欢”是两个词元（“喜”“欢”），“苹果”也是两个（“苹”“果”）。\n"
            "第 5 课（手算注意力）和文章 003 把这句话分成“我 / 喜欢 / 苹果”三个词，那是中文分词工具\n"
            "的切法；按字建模的模型看不到这种切分，“喜”和“欢”属于同一个词，要靠它自己从数据里学出来。\n");
}

// Step 2: the characters' UTF-8 bytes.
static void zh_bytes(std::ostream& out, TokenizeZhResult& r, const std::string& sentence) {
  heading(out, 2, "UTF-8 bytes: three per character here", "UTF-8 字节：这里每个字三个字节");
  for (const std::string& ch : r.sentence_chars) out << "  " << ch << "  " << hex_bytes(ch) << "\n";
  r.sentence_bytes = static_cast<int64_t>(sentence.size());
  out << tr(out, "bytes: ", "字节数：") << r.sentence_bytes << tr(out, " for ", "，字数：") << r.sentence_chars.size()
      << tr(out, " characters (", "（每字 ")
      << fmt(static_cast<double>(r.sentence_bytes) / static_cast<double>(r.sentence_chars.size()), 1)
      << tr(out, " per character)\n", " 字节）\n");
  out << tr(out,
            "Every CJK character from U+0800 to U+FFFF takes 3 bytes: a lead byte 1110xxxx and\n"
            "two continuation bytes 10xxxxxx. A byte-level model reading 我喜欢苹果 sees 15\n"
            "tokens, and a lone byte such as e6 means nothing by itself.\n",
            "U+0800 到 U+FFFF 之间的汉字都占 3 个字节：一个 1110xxxx 的首字节，加两个 10xxxxxx\n"
            "的后续字节。按字节读入的模型看到的“我喜欢苹果”是 15 个词元，而像 e6 这样的单个字节\n"
            "本身没有任何意义。\n");
}

// The poems the lesson reads, and their character vocabulary.
struct Poems {
  std::string tang, song;
  CharTokenizer chars;
};

// Step 3: the Tang poems counted in characters and bytes.
static Poems zh_poems(std::ostream& out, TokenizeZhResult& r) {
  heading(out, 3, "The Tang poems: characters and bytes", "唐诗：字数与字节数");
  // [excerpt: poems]
  std::string tang = data::read_fortune_poems(data::fortune_poems_path("tang300"));
  std::string song = data::read_fortune_poems(data::fortune_poems_path("song100"));
  CharTokenizer chars = CharTokenizer::build(tang, /*use_unk=*/true);
  // [/excerpt]
  r.tang_bytes = static_cast<int64_t>(tang.size());
  r.tang_chars = count_chars(tang);
  r.char_vocab = chars.vocab_size() - 1;  // without the unknown-character id
  out << tr(out, "tang300 poems: ", "tang300 诗文：") << r.tang_chars << tr(out, " characters, ", " 个字符，")
      << r.tang_bytes << tr(out, " bytes (", " 字节（每字符 ")
      << fmt(static_cast<double>(r.tang_bytes) / static_cast<double>(r.tang_chars), 3)
      << tr(out, " per character: line breaks take 1)\n", " 字节：换行符只占 1 个）\n");
  out << tr(out, "distinct characters: ", "不同的字符：") << r.char_vocab
      << tr(out, " (the character vocabulary)\n", "（即按字切分的词表大小）\n");
  out << tr(out, "how often each character of the sentence occurs in them:", "句中每个字在唐诗里出现的次数：");
  for (const std::string& ch : r.sentence_chars) {
    r.sentence_counts.push_back(occurrences(tang, ch));
    out << " " << ch << " " << r.sentence_counts.back();
  }
  r.word_count = occurrences(tang, "喜欢");
  out << tr(out, "; the word 喜欢: ", "；“喜欢”这个词：") << r.word_count << "\n";
  r.comma_count = occurrences(tang, "，");
  r.period_count = occurrences(tang, "。");
  out << tr(out, "and the two punctuation marks: ， ", "两个标点：“，”") << r.comma_count
      << tr(out, "   。 ", " 次，“。”") << r.period_count << tr(out, "\n", " 次\n");
  out << tr(out,
            "A character vocabulary has one id for each of them and none for a character the\n"
            "poems never use; 喜欢 as a word does not occur at all. Bytes can spell anything.\n",
            "按字的词表给每个出现过的字一个编号，唐诗里没用过的字就没有编号；“喜欢”这个词在唐诗里\n"
            "一次也没出现。字节则什么字都拼得出来。\n");
  return {std::move(tang), std::move(song), std::move(chars)};
}

// Step 4: byte-level BPE trained on the Tang poems, and what it merges first.
static BpeTokenizer zh_first_merges(std::ostream& out, TokenizeZhResult& r, const std::string& tang) {
  heading(out, 4, "Byte-level BPE on the poems: the first merges", "在唐诗上学字节级 BPE：最先学到的合并");
  // [excerpt: bpe]
  BpeTokenizer bpe = BpeTokenizer::train(tang, 4096);  // 256 bytes + 3840 merges
  // [/excerpt]
  const auto& merges = bpe.merges();
  out << tr(out, "rank  left + right  -> new token\n", "序号  左 + 右  -> 新词元\n");
  for (int32_t k = 0; k < 12; ++k) {
    const auto& m = merges[static_cast<size_t>(k)];
    out << "  " << k << (k < 10 ? "   " : "  ") << show_token(bpe.token_bytes(m.left)) << " + "
        << show_token(bpe.token_bytes(m.right)) << "  -> " << show_token(bpe.token_bytes(256 + k)) << "\n";
  }
  r.first_char_rank = r.first_word_rank = -1;
  for (int32_t k = 0; k < static_cast<int32_t>(merges.size()); ++k) {
    const std::string& b = bpe.token_bytes(256 + k);
    if (r.first_char_rank < 0 && ideographs(b, 0) && count_chars(b) == 1) {
      r.first_char_rank = k;
      r.first_char = b;
    }
    if (r.first_word_rank < 0 && ideographs(b, 2)) {
      r.first_word_rank = k;
      r.first_word = b;
    }
  }
  for (int32_t k = 0; k < 12; ++k) r.first_merges.push_back(bpe.token_bytes(256 + k));
  out << tr(out, "first whole ideograph: merge ", "第一个完整的汉字：第 ") << r.first_char_rank
      << tr(out, " (", " 次合并（") << show_token(r.first_char)
      << tr(out, "); first token of two ideographs: merge ", "）；第一个双字词元：第 ") << r.first_word_rank
      << tr(out, " (", " 次合并（") << show_token(r.first_word) << tr(out, ")\n", "）\n");
  out << tr(out,
            "The first merges spell the two punctuation marks, the commonest symbols of all.\n"
            "Then come lead bytes with their first continuation byte (e4 b8, e5 a4, ...): pieces\n"
            "that hundreds of characters share. Merge 9 already joins ， to the lead byte of the\n"
            "next character: the GPT-2 pre-split counts every byte >= 0x80 as a letter, so a\n"
            "whole line of a poem is one chunk and punctuation merges across characters.\n",
            "最先合并出来的是两个标点，它们是出现最多的符号。接着是首字节和第一个后续字节（e4 b8、\n"
            "e5 a4 ……），这种片段几百个字共用。第 9 次合并就把“，”和下一个字的首字节连在了一起：\n"
            "GPT-2 的预切分把所有 >= 0x80 的字节都当成字母，所以一整行诗是一个块，标点也会跟\n"
            "汉字合并。\n");
  return bpe;
}

// Step 5: tokens per character for the first 256 ... 4096 tokens of that BPE run.
static void zh_vocab_growth(std::ostream& out, TokenizeZhResult& r, const Poems& poems, const BpeTokenizer& bpe,
                            const std::string& sentence) {
  const std::string& tang = poems.tang;
  const std::string& song = poems.song;
  const CharTokenizer& chars = poems.chars;
  const auto& merges = bpe.merges();
  heading(out, 5, "Tokens per character as the vocabulary grows", "词表变大时，每个字需要几个词元");
  std::vector<std::vector<std::string>> growth{
      {tr(out, "vocab", "词表"), tr(out, "merges", "合并数"), tr(out, "tang: tokens/char", "唐诗：词元/字"),
       tr(out, "song (unseen): tokens/char", "宋词（未见过）：词元/字"), "我喜欢苹果"}};
  const int64_t song_chars = count_chars(song);
  for (int32_t v : {256, 512, 1024, 2048, 4096}) {
    // [excerpt: prefix]
    std::vector<BpeTokenizer::Merge> first(merges.begin(), merges.begin() + (v - 256));
    BpeTokenizer smaller(first, bpe.gpt2_split());  // the first v - 256 merges of the same run
    // [/excerpt]
    double tang_tpc = static_cast<double>(smaller.encode(tang).size()) / static_cast<double>(r.tang_chars);
    double song_tpc = static_cast<double>(smaller.encode(song).size()) / static_cast<double>(song_chars);
    int64_t n_sentence = static_cast<int64_t>(smaller.encode(sentence).size());
    r.vocab_sizes.push_back(v);
    r.tang_tokens_per_char.push_back(tang_tpc);
    r.song_tokens_per_char.push_back(song_tpc);
    r.sentence_tokens.push_back(n_sentence);
    growth.push_back(
        {std::to_string(v), std::to_string(v - 256), fmt(tang_tpc, 3), fmt(song_tpc, 3), std::to_string(n_sentence)});
  }
  print_table(out, growth);
  r.char_tokens_per_char = 1.0;
  out << tr(out, "我喜欢苹果 with 4096 tokens: ", "词表 4096 时的“我喜欢苹果”：");
  for (int32_t id : bpe.encode(sentence)) out << show_token(bpe.token_bytes(id)) << " ";
  out << "\n";
  std::vector<int32_t> song_ids = chars.encode(song);
  for (int32_t id : song_ids) r.song_unknown += id == chars.unk_id();
  out << tr(out, "characters (vocab ", "按字切分（词表 ") << r.char_vocab
      << tr(out, "): 1 token per character, but ", "）：每字 1 个词元，但宋词里有 ") << r.song_unknown
      << tr(out, " of the Song poems' characters are unknown to it.\n", " 个字不在词表里，只能记成未知词元。\n");
  out << tr(out,
            "The merges learned on the Tang poems help less on the Song poems: a vocabulary fits\n"
            "the text it was learned from. 我喜欢苹果 shrinks less than the poems do: 苹 and 果 are\n"
            "too rare in them (step 3) for merges of their own and stay in byte pieces.\n",
            "在唐诗上学到的合并，用到宋词上效果打了折扣：词表贴合的是训练它的文本。“我喜欢苹果”\n"
            "缩短得不如唐诗本身多：“苹”和“果”在唐诗里太少见（见第 3 步），没有轮到自己的合并，\n"
            "仍是字节碎片。\n");
}

// Step 6: what a larger vocabulary buys in length and costs in weights.
static void zh_trade_off(std::ostream& out, TokenizeZhResult& r) {
  heading(out, 6, "The trade-off: vocabulary size against sequence length", "权衡：词表大小与序列长度");
  // A model of width C = 384 with a context of 256 tokens (the default experiment's sizes).
  const int64_t C = 384, context = 256;
  out << tr(out, "for a model of width C = 384 and a context of 256 tokens:\n",
            "设模型宽度 C = 384，上下文 256 个词元：\n");
  std::vector<std::vector<std::string>> trade_off{
      {tr(out, "vocab", "词表"), tr(out, "embedding V*C", "嵌入表 V*C"),
       tr(out, "characters in 256 tokens", "256 个词元装下的字数"),
       tr(out, "attention scores for 256 characters", "256 个字需要的注意力分数个数")}};
  auto row = [&](const std::string& name, int64_t v, double tpc) {
    int64_t params = v * C;
    double fits = static_cast<double>(context) / tpc;
    double T = 256 * tpc;
    trade_off.push_back({name, std::to_string(params), fmt(fits, 0), fmt(T * T, 0)});
    r.embedding_params.push_back(params);
    r.chars_in_context.push_back(fits);
  };
  for (size_t i = 0; i < r.vocab_sizes.size(); ++i)
    row(std::to_string(r.vocab_sizes[i]), r.vocab_sizes[i], r.tang_tokens_per_char[i]);
  row(std::to_string(r.char_vocab), r.char_vocab, 1.0);
  print_table(out, trade_off);
  out << tr(out, "(the last row is the character vocabulary)\n", "（最后一行是按字切分的词表）\n");
  r.bytes_vs_chars_length = r.tang_tokens_per_char.front();
  out << tr(out, "raw bytes against characters: ", "纯字节与按字相比：序列长度是按字的 ")
      << fmt(r.bytes_vs_chars_length, 2) << tr(out, " times the sequence length, ", " 倍，注意力分数是 ")
      << fmt(r.bytes_vs_chars_length * r.bytes_vs_chars_length, 2) << tr(out, " times the attention scores\n", " 倍\n");
  out << tr(out,
            "Attention costs grow with the square of the length, so bytes pay twice: a fixed\n"
            "context holds about a third of the text, and each character costs eight times the\n"
            "scores. Each doubling of the vocabulary shortens the sequence by less than the one\n"
            "before and doubles the embedding table (and the output layer, which has the same\n"
            "V*C weights when it is not tied).\n",
            "注意力的开销随长度平方增长，所以字节要付两次代价：同样的上下文只装得下约三分之一的\n"
            "文字，而每个字的注意力分数约为按字切分时的八倍。词表每翻一倍，序列缩短得比上一次少，嵌入表\n"
            "却翻一倍（不共享权重时，输出层也有同样的 V*C 个权重）。\n");
}

TokenizeZhResult run_lesson_tokenize_zh(std::ostream& out) {
  TokenizeZhResult r;
  const std::string sentence = "我喜欢苹果";
  zh_characters(out, r, sentence);
  zh_bytes(out, r, sentence);
  const Poems poems = zh_poems(out, r);
  const BpeTokenizer bpe = zh_first_merges(out, r, poems.tang);
  zh_vocab_growth(out, r, poems, bpe, sentence);
  zh_trade_off(out, r);
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_tokenize_zh() {
  return {"tokenize-zh", "Tokenizing Chinese: characters, UTF-8 bytes, BPE merges on the Tang poems",
          "中文分词与词元化：按字、按 UTF-8 字节、在唐诗上学 BPE 合并", printing(run_lesson_tokenize_zh)};
}

}  // namespace sf::lessons
