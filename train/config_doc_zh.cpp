// config_doc_zh.cpp: the Chinese texts of the config reference, configs/README.zh.md: its
// introduction, and one text for each section, key and ready config of the English edition.
//
// Written for a learner, in the terms of lessons/zh/glossary.md. Keys, values, JSON, commands and
// error messages stay in English, as everywhere in the Chinese edition; values and formulas go in
// `code`, so no ASCII quote touches a Chinese character. Each text keeps the numbers of its English
// one (a test compares them). After changing a text, regenerate the file:
//   build/scratchformer config-doc --lang zh > configs/README.zh.md
#include "train/config_doc_zh.h"

namespace sf {

const ConfigDocTexts& config_doc_zh() {
  static const ConfigDocTexts texts{
      .intro =
          R"(<!-- 由 `scratchformer config-doc --lang zh > configs/README.zh.md` 根据 train/config.h 和 train/config_doc_zh.cpp 生成；要改请改那两个文件，不要改本文件（本文件过期时测试会失败）。 -->
# 实验配置

English: [README.md](README.md)

一次实验就是一个 JSON 文件，由下面这几节组成。每个配置项都可以不写，不写的项取这里列出的默认值。未知的配置项、类型不对的值和不可能的值都会报错，报错时指出是哪一项（`error: configs/x.json: optim.lr: must be > 0, got -1`；错误信息保持英文，便于搜索），配置有错时不会创建运行目录。实际用的配置（每一项都写出来，包括取默认值的项）保存在运行目录的 `config.json` 里。

```sh
scratchformer train configs/default.json                         # 训练
scratchformer train configs/default.json --set optim.lr=3e-4 --set train.steps=500
scratchformer train configs/default.json --resume runs/default   # 从停下的地方接着训练
```

`--set section.key=value` 把值当作 JSON 解析（`3e-4`、`true`、`"text"`），不是合法的 JSON 时就当作普通字符串（`--set data.path=my.txt`）。`"precision": "bf16"` 是 `"precision": {"dtype": "bf16"}` 的简写。顶层的 `"description"` 字符串会显示在日志里。表中“类型”一栏保留英文，和错误信息里的说法对应（如 `expected a number`、`expected an integer`、`expected true or false`）：`string` 是字符串，`integer` 是整数，`number` 是数值（可以带小数），`bool` 是 `true` 或 `false`。
)",
      .key_table = "| 配置项 | 类型 | 默认值 | 含义 |\n| --- | --- | --- | --- |\n",
      .ready_table = "\n## 现成的配置\n\n| 文件 | 训练什么 |\n| --- | --- |\n",
      .sections =
          {
              {"model", "模型的网络结构。"},
              {"data", "模型从什么数据里学。"},
              {"optim", "优化器和梯度裁剪。"},
              {"schedule", "学习率随训练步数怎样变化。"},
              {"train", "训练循环：训练多少步、批次、评估、种子。"},
              {"precision", "混合精度的模拟和损失缩放。"},
              {"output", "结果写到哪里。"},
          },
      .fields =
          {
              // model
              {"model.type",
               R"(模型类型：`"gpt"`（只有解码器的语言模型）或 `"transformer"`（编码器-解码器，用于 seq2seq 任务）)"},
              {"model.n_layer",
               R"(有多少个 Transformer 块（对 `"transformer"`，编码器和解码器各有这么多个，除非设了 `n_decoder_layer`）)"},
              {"model.n_head", "每层的注意力头数；`n_embd` 必须能被它整除"},
              {"model.n_embd", "模型宽度 d_model：每个词元向量的维数"},
              {"model.block_size",
               "模型能接受的最长序列，即上下文长度（可学习的位置嵌入表或正弦位置编码表有这么多行）"},
              {"model.n_decoder_layer", R"(只用于 `"transformer"`：解码器有多少个块；0 表示与 `n_layer` 相同)"},
              {"model.d_ff", "前馈网络隐藏层的宽度；0 表示 4 * n_embd"},
              {"model.dropout", "作用在注意力权重和残差分支上的 dropout 概率，取值在 [0, 1) 内"},
              {"model.bias", "线性层（Linear）和层归一化是否带偏置（即 nanoGPT 的 `bias`）"},
              {"model.activation",
               R"(前馈网络的激活函数：`"gelu"`（用 erf 的精确形式）、`"gelu_tanh"`（用 tanh 的近似形式）或 `"relu"`)"},
              {"model.pos_encoding",
               R"(位置信息怎样进入模型：`"learned"`（可学习的位置嵌入）、`"sinusoidal"`（正弦位置编码）、)"
               R"(`"rope"`（旋转位置编码）、`"alibi"`（ALiBi：按距离给注意力分数加线性偏置）或 `"none"`（不加位置信息：GPT 有因果掩码，)"
               R"(仍然分得出先后顺序）)"},
              {"model.norm", R"(层归一化放在哪里：`"pre"`（`x + f(LN(x))`，GPT-2 的做法）或 `"post"`（`LN(x + f(x))`，)"
                             R"(Vaswani 等人原论文的做法）)"},
              {"model.tie_weights", "权重共享：输出层（LM head）复用词嵌入矩阵"},
              {"model.scale_embeddings",
               R"(只用于 `"gpt"`：词嵌入按 N(0, 1/n_embd) 初始化，前向传播时把词元向量乘以 sqrt(n_embd)，)"
               R"(于是进入第 1 个块的每个元素方差都是 1（Vaswani 等人的做法，也是 Xiong 等人实验里的设置）；)"
               R"(`"transformer"` 总是这样缩放，和论文一样)"},
              {"model.init",
               R"(权重初始化：`"gpt2"`（标准差为 0.02 的正态分布，)"
               R"(其中把结果写回残差流的输出投影，标准差再除以 sqrt(2L)，L 为层数）或 `"xavier"`（Xavier 均匀初始化）)"},
              {"model.window", "滑动窗口注意力的宽度（每个查询只看最近的 `window` 个键）；0 表示不用窗口，看全部"},
              {"model.attention",
               R"(注意力的核函数：`"stored"`（把 T x T 的概率存下来，留给反向传播）、)"
               R"(`"tiled"`（FlashAttention 的在线 softmax：每行只存一个 log-sum-exp，)"
               R"(反向传播时重新算出概率）或 `"auto"`（分数矩阵 T x S 至少有 1024 x 1024 个元素时用 `"tiled"`，)"
               R"(更小时用 `"stored"`：这条规则来自 bench/README.md 里的实测）)"},
              {"model.n_kv_head",
               "自注意力里键和值的头数：为 0 或等于 `n_head` 时是标准的多头注意力；为 1 时是多查询注意力（MQA）；"
               "为 `n_head` 的其他因数时是分组查询注意力（GQA）。KV 缓存只存这些头"},
              {"model.recompute",
               R"(只用于 `"gpt"`：激活重计算。前向传播时每个块的两半（注意力、前馈网络）只保存各自的输入，)"
               R"(反向传播时把每一半重新算一遍（内存更省，计算量约多三分之一）；要求 `dropout` 为 0)"},
              // data
              {"data.dataset",
               R"(用什么数据训练：`"synthetic"`（内置的马尔可夫语料，不需要任何文件）、)"
               R"(`"text"`（`data.path` 指定的文本）、`"shakespeare"`（Tiny Shakespeare，)"
               R"(随仓库放在 data/corpora/ 里）、`"tang"` / `"song"`（Debian 的 fortunes-zh 里的唐诗和宋词：)"
               R"(只留诗句，去掉标题和作者，好让模型学到诗词的格式；两首之间空一行），或者一个 seq2seq 任务：)"
               R"(`"copy"`（复制）、`"reverse"`（反转）、`"sort"`（排序）、`"addition"`（加法）)"},
              {"data.path",
               R"(数据集 `"text"` 用的文本文件，或装着 .txt 文件的目录；对 `"tang"` / `"song"`，)"
               R"(可以换用另一个 fortunes-zh 文件（默认用软件包里的）；其他数据集给了它就报错。只接受普通文件，)"
               R"(文本最多 1 GiB)"},
              {"data.tokenizer",
               R"(文本类数据集（`"text"`、`"shakespeare"`、`"tang"`、`"song"`）用的分词器：)"
               R"(`"char"`（一个 Unicode 码位一个词元）或 `"bpe"`（在这份文本上训练出来的字节级 BPE）)"},
              {"data.bpe_vocab_size", "BPE 分词器学出的词表大小（至少 256）"},
              {"data.val_fraction", "留作验证集的文本比例（取文本末尾的这一段）"},
              {"data.block_size", "训练时的上下文长度（每个训练窗口有多少个词元）；0 表示与 `model.block_size` 相同"},
              {"data.corpus_tokens", "合成语料：训练文本的长度（词元数）"},
              {"data.corpus_val_tokens", "合成语料：验证文本的长度（词元数）"},
              {"data.corpus_order",
               "合成语料：生成语料的马尔可夫信源（按概率逐个产生符号的随机过程）根据前面几个符号生成下一个（1 或 2）"},
              {"data.corpus_seed", "合成语料的马尔可夫信源的种子（换一个种子，语言本身就变了）"},
              {"data.task_min_len", "seq2seq 任务：最短的输入（按符号个数计；加法按每个数的位数计）"},
              {"data.task_max_len", "seq2seq 任务：最长的输入（按符号个数计；加法按每个数的位数计）"},
              {"data.task_symbols",
               "复制、反转、排序任务：序列里的符号有多少种，不算分隔符等特殊词元（加法总是用 10 个数字）"},
              {"data.task_eval_size", "seq2seq 任务：验证集有多少个样例（固定留出，不参加训练）"},
              {"data.cache_dir",
               "下载的文件和词元缓存（tokens/）放在哪里，不会放进你的文本所在的目录；为空时用 `$SF_DATA_DIR`，"
               "没有设置这个环境变量时用 `~/.cache/scratchformer`"},
              // optim
              {"optim.name", R"(优化器：`"adamw"`（带解耦权重衰减的 Adam）、`"adam"` 或 `"sgd"`)"},
              {"optim.lr", "学习率的峰值（学习率调度在它的基础上缩放）"},
              {"optim.beta1", "Adam/AdamW：一阶矩（均值）估计的衰减率"},
              {"optim.beta2", "Adam/AdamW：二阶矩（未中心化的方差）估计的衰减率"},
              {"optim.eps", "Adam/AdamW：加在分母 sqrt(v) 上的一个很小的数，免得除以接近零的数"},
              {"optim.weight_decay", "权重衰减系数（adamw 用解耦的权重衰减；adam 和 sgd 把它作为 L2 项加进梯度）"},
              {"optim.decay",
               R"(权重衰减作用在哪些参数上：`"matrices"`（线性层的权重，不含嵌入、偏置和层归一化的参数）、)"
               R"(`"all_matrices"`（所有 2 维的张量，包括嵌入，和 nanoGPT 一样）或 `"all"`（全部参数）)"},
              {"optim.momentum", "只用于 sgd：动量系数；0 表示不带动量的普通 SGD"},
              {"optim.nesterov", "只用于 sgd：使用 Nesterov 动量"},
              {"optim.grad_clip", "梯度裁剪：全部梯度合起来的 L2 范数超过这个值时，按比例缩小到这个值（0 表示不裁剪）"},
              {"optim.clip_value", "把每个梯度元素裁剪到 [-v, v] 之内，v 就是这个值（0 表示不裁剪）"},
              // schedule
              {"schedule.name",
               R"(学习率调度：`"constant"`（预热之后保持不变）、`"cosine"`（先预热，再按余弦衰减到 `min_lr`）、)"
               R"(`"linear"`（先预热，再线性衰减到 `min_lr`）或 )"
               R"(`"noam"`（`n_embd^-0.5 * min(step^-0.5, step * warmup^-1.5)`，再乘以 `lr`）)"},
              {"schedule.warmup_steps",
               "学习率预热的步数，预热期间学习率线性上升：lr * (step+1)/(warmup+1)；0 表示不预热"},
              {"schedule.min_lr", "余弦或线性衰减最后降到的学习率下限"},
              {"schedule.decay_steps", "学习率衰减到 `min_lr` 的那一步；0 表示 `train.steps`"},
              // train
              {"train.steps", "训练多少步（优化器更新多少次）"},
              {"train.batch_size",
               "每一步用多少条序列，即批大小（`grad_accum_steps` > 1 或用 mpirun 运行时，是每个微批次的序列数）"},
              {"train.grad_accum_steps",
               "梯度累积：每次优化器更新把多少个微批次（每个 `batch_size` 条序列）的梯度加起来。相当于每步用 "
               "`batch_size × grad_accum_steps` 条序列更新一次（用 mpirun 时再乘以 rank 数），占用的内存却只有一个微批次那么多"},
              {"train.eval_interval", "每隔这么多步评估一次（并保存检查点），训练结束时也评估一次"},
              {"train.eval_iters", "每次评估在训练集和验证集上各取多少个随机批次求平均（nanoGPT 的估计方法）"},
              {"train.eval_full", "训练结束时，再在整个验证集上评估一次（用互不重叠的窗口）"},
              {"train.log_interval", "标准输出不是终端时（例如重定向到文件），每隔这么多步打印一行日志"},
              {"train.seed", "所有随机选择（初始化、批次、dropout）的种子：种子相同，两次训练逐位相同"},
              {"train.rng",
               R"(随机数生成器：`"xoshiro"`（我们自己的，以 `seed` 为种子）或 `"torch"`（PyTorch 的 CPU 生成器，)"
               R"(初始化和抽批次共用这一个生成器，和 nanoGPT 的 train.py 一样：先 `torch.manual_seed(seed)`，再初始化模型，)"
               R"(然后用 `torch.randint` 抽取批次，所以能逐次重现 nanoGPT 一次训练里的每一次随机抽取；)"
               R"(只能用于 `init` 为 `"gpt2"` 的 GPT；dropout 掩码仍由我们自己的生成器产生）)"},
              {"train.threads", "BLAS 的线程数；0 表示取 `$SF_NUM_THREADS`，没有设置时用上所有 CPU 核心"},
              {"train.label_smoothing", "交叉熵的标签平滑系数，取值在 [0, 1) 内"},
              {"train.samples", "训练结束时打印几个样本（0 表示不打印）"},
              {"train.sample_tokens", "打印的每个样本有多少个词元"},
              {"train.max_loss", "训练损失为 NaN 或超过这个值时，判定训练发散，报错停止"},
              {"train.reference",
               "同一份数据上的一个已知结果，打印在最终验证损失的估计旁边，例如 "
               "`\"nanoGPT's CPU recipe (2000 steps)\"`（`\"\"` 表示没有）"},
              {"train.reference_val_loss",
               "那个已知结果的验证损失，用同样的估计方法（`eval_iters` 个批次求平均；与 `train.reference` 一起用）"},
              // precision
              {"precision.dtype", R"(模拟的计算精度：`"fp32"`、`"fp16"` 或 `"bf16"`（权重主副本始终是 fp32）)"},
              {"precision.loss_scaling", "只用于 fp16：动态损失缩放（GradScaler）；fp32 和 bf16 忽略这一项"},
              {"precision.init_scale", "只用于 fp16：缩放因子的初始值"},
              {"precision.growth_factor",
               "只用于 fp16：连续 `growth_interval` 步梯度里都没有 inf 或 NaN 之后，缩放因子乘以这个数"},
              {"precision.backoff_factor", "只用于 fp16：梯度上溢时，缩放因子乘以这个数，并跳过这一步的更新"},
              {"precision.growth_interval", "只用于 fp16：连续多少步梯度都有限（没有 inf 或 NaN），缩放因子才增大"},
              // output
              {"output.run_dir", "运行目录：存放实际用的配置、指标、检查点和损失曲线图"},
              {"output.checkpoint_interval", "每隔这么多步写一次检查点 `last`；0 表示每次评估时写"},
              {"output.save_best", "另外保留检查点 `best`，即验证损失最低的那个"},
              {"output.overwrite", "允许在已经有一次训练的 `run_dir` 里重新开始一次训练"},
              {"output.plot", "训练结束时用 gnuplot 画出 loss.png（没有安装 gnuplot 时跳过，并打印一行说明）"},
          },
      .configs =
          {
              {"addition.json",
               R"(编码器-解码器 Transformer 学做多位数加法（`"4 7 + 8 5 -> 1 3 2"`，每个数最多 3 位）；)"
               R"(报告它在验证集的 500 道加法题上的完全正确率（按这里的设置训练 2000 步后是 99.6%，)"
               R"(在整个验证集上的损失是 0.0036）。对每一种位数组合，验证集最多取走其中一半的题目，)"
               R"(所以训练时也见得到 1 位数加 1 位数的题。)"},
              {"compare_ln.json",
               "在论文的设置下对比 Pre-LN 与 Post-LN（Xiong 等人，2020）：词元向量是单位尺度的（嵌入从 N(0, 1/d) "
               "中抽取再乘以 sqrt(d)，加上正弦位置编码），线性层用 Xavier 初始化，前馈网络用 ReLU，输出层不与词嵌入共享"
               "权重，优化器是 Adam（一阶矩和二阶矩的衰减率分别为 0.9 和 0.98），不做梯度裁剪；Post-LN 在最后一个块之后不再加层归一化，Pre-LN 加。它测量初始化时"
               "每一层前馈网络的梯度范数、它们随深度的缩放和隐藏状态的范数；还比较有无学习率预热的训练，并试一组不同的"
               "学习率。每项都用 3 个种子，每个发现都附有判据和结论。用 `scratchformer compare configs/compare_ln.json` "
               "运行；在 2 个 CPU 核心上不到 20 分钟。"},
              {"default.json",
               "在 Tiny Shakespeare 上训练的字符级 GPT（语料随仓库放在 data/corpora/ 里，不用下载）：nanoGPT 的 CPU "
               "模型（4 层、4 个头、宽度 128、上下文长度 64），以学习率 2e-3 训练 1500 步。按 nanoGPT 的算法量出的验证"
               "损失是 1.883（在留作验证的最后 10% 文本里随机取 20 个批次求平均，可以和 nanoGPT 的 1.8857 直接比较），"
               "在全部留出的文本上是 1.888；换一种 CPU，可能相差 0.001 左右。在一台有 2 个空闲 CPU 核心的 Intel Xeon "
               "上，实际用时 35 秒（只用 AVX2 的构建 52 秒），CPU 时间 68 秒；生成的文本有说话人的名字和换行，大多是"
               "真实的单词。"},
              {"markov.json",
               "在内置的合成语料上训练的小 GPT（语料来自一个阶数为 2、有 27 个符号的马尔可夫信源，不用下载）；报告它的"
               "验证损失离信源的熵率（平均每个符号的熵，验证损失的下限）有多近。在 2 个 CPU 核心上大约一分钟。"},
              {"reverse.json", R"(编码器-解码器 Transformer 学习把 2 到 8 个符号的序列反转过来（`"a b c -> c b a"`）；)"
                               R"(报告它在验证集的 500 条序列上的完全正确率（按这里的设置训练 1500 步后是 100%，)"
                               R"(在整个验证集上的损失是 0.0002）。每一种长度的输入，)"
                               R"(验证集最多取走一半（这里 100 个长度为 2 的输入最多取走 50 个），)"
                               R"(所以即使把 `task_min_len` 设为 1，也会留下一些长度为 1 的输入供训练。)"},
              {"shakespeare_char_cpu.json",
               R"(nanoGPT 在 Tiny Shakespeare（按字符）上的 CPU 配方：4 层、4 个头、宽度 128、上下文长度 64，)"
               R"(训练 2000 步，随机抽取用 PyTorch 的生成器（`train.rng` 为 `"torch"`），)"
               R"(所以这次训练重放的正是 nanoGPT 的那一次：)"
               R"(验证损失 1.8857（20 个批次的估计）/ 1.8982（整个验证集）。文本随仓库放在 data/corpora/ 里。)"},
              {"tang.json",
               "在唐诗（Debian fortunes-zh 里的《唐诗三百首》，只取诗句）上训练的字符级 GPT，用旋转位置编码（RoPE）。"
               "实测：它的 8 个样本共生成 216 句，其中 87.5% 是 5 个字或 7 个字（语料本身是 95.0%）；训练 600 步后"
               "验证损失 5.73（整个验证集上是 5.78）。同一个模型换用可学习的位置嵌入，训练 400 步后只有 14.4% 的句子"
               "合乎这个格式（RoPE：84.9%，ALiBi：35.7%；那次统计把每个样本末尾被截断的句子也算在内）：一行有多长，"
               "就是离上一个换行符有多远，而旋转位置编码把这个距离直接交给了每一个头。语料只有 25,000 个字，却有 "
               "2,500 种不同的字，对模型来说太小了：从第 150 步起验证损失一直停在 5.73 附近，训练损失却从 5.31 降到 "
               "3.60，说明模型在死记硬背训练文本。用时：在 2 个空闲的 CPU 核心上实际用时 2 分 28 秒、CPU 时间 227 秒（在一台"
               "平均负载为 16、很忙的机器上要 8 分 51 秒）。"},
          },
  };
  return texts;
}

}  // namespace sf
