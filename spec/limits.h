#ifndef ACCEL_SPEC_LIMITS_H_
#define ACCEL_SPEC_LIMITS_H_

#include <cstdint>

// Upper bounds on every number in a job spec (or a model config.json) that drives the time or
// memory of planning, or the size of what the executor is asked to do. Each admits every real
// job with room to spare (the largest published values are named beside it), so a value above
// one is a typo or an attack, and planning stays linear in the world size and in the pipeline
// schedule up to these bounds. The field registry (spec/field_registry.cc) and the JSON Schema
// carry the per-field bounds (error E0104, located at the value); the planner checks the
// products of fields against the cross-field bounds (error E0419).
namespace accel::spec {

// ---- Cross-field bounds (checked by the planner) ----

// Ranks in one job: cluster.nodes × cluster.devices_per_node. Four times Llama 3 405B's 16,384
// GPUs. The plan lists every rank and every process group, so plan size is linear in this; the
// limit is set by `--format json` (protobuf's JSON printer), which takes 15 to 25 times the
// memory and time of planning itself (bench/RESULTS.md, planning time against world size).
inline constexpr int64_t kMaxWorldSize = 65'536;

// Pipeline stages × microbatches per step: the forward/backward slots of the pipeline schedule,
// each of which becomes up to six ops in the plan. Megatron-LM's largest published runs use
// 8–35 stages with a few hundred microbatches (about 10^4 slots); this admits, e.g., 64 stages
// × 1,024 microbatches; the plan then has about as many ops as it has ranks at the world-size
// limit, so it costs the JSON printer as much.
inline constexpr int64_t kMaxPipelineSlots = 65'536;

// Tokens one optimizer step consumes: global_batch_size × seq_len. 256 times Llama 3's 16M-token
// batches; with kMaxTrainingSteps it keeps the plan's total token count inside 63 bits.
inline constexpr int64_t kMaxTokensPerStep = int64_t{1} << 32;

// ---- Per-field bounds (checked by the loader and the JSON Schema) ----

// cluster.nodes: a node has at least one device, so never more nodes than ranks.
inline constexpr int64_t kMaxNodes = kMaxWorldSize;

// cluster.devices_per_node: GPU servers hold 8–16 devices and an NVL72 rack 72; CPU jobs run one
// worker per core, at most a few hundred on today's hosts.
inline constexpr int64_t kMaxDevicesPerNode = 1'024;

// cluster.collective_timeout_seconds: how long a rank waits for a peer in one collective before
// the job fails. torchrun's default is 30 min (NCCL) / 5 min here; a day is longer than any
// checkpoint write or data load that a collective may legitimately wait for.
inline constexpr int64_t kMaxCollectiveTimeoutSeconds = 86'400;

// parallel.data_replicate, data_shard, context, tensor, pipeline: a degree multiplies into the
// world size, so it cannot exceed it.
inline constexpr int64_t kMaxParallelDegree = kMaxWorldSize;

// parallel.pipeline_microbatches and data.grad_accum_steps: even without pipelining each
// microbatch is a schedule slot.
inline constexpr int64_t kMaxMicrobatches = kMaxPipelineSlots;

// model.num_layers: the planner keeps a parameter table of about 12 tensors per layer and
// re-estimates memory per stage. Published decoders have at most 126 blocks (Llama 3 405B);
// DeepNet trained 1,000-layer encoder-decoders.
inline constexpr int64_t kMaxNumLayers = 2'048;

// model.hidden_size: the widest published models use 16,384–20,480 (Llama 3 405B,
// Megatron-Turing NLG 530B).
inline constexpr int64_t kMaxHiddenSize = 65'536;

// model.num_heads and num_kv_heads: a head is at least one dimension wide.
inline constexpr int64_t kMaxNumHeads = kMaxHiddenSize;

// Routed (and shared) experts per mixture-of-experts layer (model.moe.num_experts): DeepSeek-V3
// has 256, Qwen3-MoE 128; the expert ranges of the plan grow with it.
inline constexpr int64_t kMaxNumExperts = 4'096;

// model.ffn_hidden_size: four times the widest hidden size (PaLM 540B uses 73,728).
inline constexpr int64_t kMaxFfnHiddenSize = 4 * kMaxHiddenSize;

// model.vocab_size: 16 times the largest vocabularies in use (Gemma, 256K).
inline constexpr int64_t kMaxVocabSize = int64_t{1} << 22;

// model.max_seq_len and data.seq_len: the longest contexts published are 10M tokens
// (Llama 4 Scout's max_position_embeddings).
inline constexpr int64_t kMaxSeqLen = int64_t{1} << 24;

// data.global_batch_size: a sequence has at least one token, so the tokens-per-step bound is
// also a batch bound (the corpus's largest batch is 65,536 sequences).
inline constexpr int64_t kMaxGlobalBatchSize = kMaxTokensPerStep;

// data.micro_batch_size: sequences one rank processes at once; short-sequence models use up to
// about 1,024. Keeps micro × data-parallel size × microbatches inside 51 bits.
inline constexpr int64_t kMaxMicroBatchSize = 65'536;

// training.steps, lr_schedule.warmup_steps, log_every_steps, checkpoint.every_steps and
// checkpoint.keep (never more checkpoints than steps): 2^30, a thousand times the longest
// published schedules (about 10^6 steps).
inline constexpr int64_t kMaxTrainingSteps = int64_t{1} << 30;

// training.sample_tokens: the executor generates them one forward pass at a time after
// training, a smoke check; 65,536 already takes minutes on a CPU.
inline constexpr int64_t kMaxSampleTokens = 65'536;

// training.loss_chunks: blocks of a micro batch's tokens; a block of one token is the finest
// split, and micro batches hold at most 2^20 · 2^16 tokens, far beyond any useful count.
inline constexpr int64_t kMaxLossChunks = int64_t{1} << 20;

// sharding.bucket_size, prefetch_bucket_size, param_persistence_threshold (elements): 64 times
// the 10^9 DeepSpeed configs use at most; the `auto` values (h², 10h) stay below it.
inline constexpr int64_t kMaxBucketElements = int64_t{1} << 36;

// cluster.device_memory and cluster.runtime_overhead (bytes): the largest accelerators hold
// 192 GB and CPU hosts a few TiB; 1 PiB keeps every sum of memory terms far from 2^63.
inline constexpr int64_t kMaxDeviceMemoryBytes = int64_t{1} << 50;

// name (bytes): it becomes the run directory runs/<name>, and Linux file systems allow 255 bytes
// per path component (NAME_MAX); a 300-byte name validated and then failed `accel run` with
// "File name too long" (#42). 200 leaves room for what is added to it.
inline constexpr int64_t kMaxNameBytes = 200;

}  // namespace accel::spec

#endif  // ACCEL_SPEC_LIMITS_H_
