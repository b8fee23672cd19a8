#ifndef ACCEL_COMMON_DIAG_CODES_H_
#define ACCEL_COMMON_DIAG_CODES_H_

// Stable diagnostic codes. A code never changes meaning once released; new checks get new
// codes. E = error, W = warning. Ranges: E00xx input files, E01xx spec fields, E02xx model
// config.json, E03xx JSON Schema, E04xx planner layout/batch rules, E05xx memory,
// E06xx executor support, E07xx `accel import` (configs of other tools), E08xx step time.
namespace accel::codes {

// Input files (loader).
inline constexpr const char* kFileUnreadable = "E0001";   // missing / unreadable file
inline constexpr const char* kFileTooLarge = "E0002";     // over the 1 MiB limit
inline constexpr const char* kNotText = "E0003";          // binary data or invalid UTF-8
inline constexpr const char* kYamlSyntax = "E0004";       // YAML parser error
inline constexpr const char* kEmptyDocument = "E0005";    // empty file or only comments
inline constexpr const char* kTooDeep = "E0006";          // nesting deeper than 64
inline constexpr const char* kTooManyNodes = "E0007";     // alias/anchor expansion bomb
inline constexpr const char* kTabIndent = "E0008";        // tab used for indentation
inline constexpr const char* kMultipleDocuments = "E0009";

// Spec fields (loader, overrides).
inline constexpr const char* kUnknownKey = "E0101";
inline constexpr const char* kDuplicateKey = "E0102";
inline constexpr const char* kWrongType = "E0103";
inline constexpr const char* kOutOfRange = "E0104";
inline constexpr const char* kMissingField = "E0105";
inline constexpr const char* kBadEnum = "E0106";
inline constexpr const char* kAutoNotAllowed = "E0107";
inline constexpr const char* kBadSize = "E0108";
inline constexpr const char* kBadOverride = "E0109";
inline constexpr const char* kBadVersion = "E0110";
inline constexpr const char* kConflict = "E0111";         // two fields that contradict
// A path value that would make accel write outside the directories the spec names ('..').
inline constexpr const char* kPathEscapes = "E0112";
// data.train.tokenizer is neither `bytes` nor a *.json / *.model tokenizer file name.
inline constexpr const char* kBadTokenizer = "E0113";

// Model config.json.
inline constexpr const char* kModelConfigUnreadable = "E0201";
inline constexpr const char* kModelConfigInvalid = "E0202";
inline constexpr const char* kModelTypeUnsupported = "E0203";
// Device-profile JSON (cluster.device_profile).
inline constexpr const char* kDeviceProfileUnreadable = "E0204";
inline constexpr const char* kDeviceProfileInvalid = "E0205";

// JSON Schema.
inline constexpr const char* kSchema = "E0301";

// Planner: layout, batch arithmetic, cross-field rules.
inline constexpr const char* kWorldSizeMismatch = "E0401";
inline constexpr const char* kTooManyAuto = "E0402";
inline constexpr const char* kHeadsNotDivisible = "E0403";
inline constexpr const char* kKvHeadsNotDivisible = "E0404";
inline constexpr const char* kTooFewLayers = "E0405";
inline constexpr const char* kBatchArithmetic = "E0406";
inline constexpr const char* kTooFewMicrobatches = "E0407";
inline constexpr const char* kLossScalingNeedsFp16 = "E0408";
inline constexpr const char* kOffloadNeedsSharding = "E0409";
inline constexpr const char* kHybridNeedsReplicate = "E0410";
inline constexpr const char* kSeqLenTooLong = "E0411";
inline constexpr const char* kUnresolvedAuto = "E0412";
inline constexpr const char* kBadDegree = "E0413";
inline constexpr const char* kParamOffloadNeedsStage3 = "E0414";
inline constexpr const char* kSequenceParallelNeedsTp = "E0415";
inline constexpr const char* kHybridNeedsStage3 = "E0416";
inline constexpr const char* kContextNotDivisible = "E0417";
inline constexpr const char* kConflictingBatch = "E0418";
// A product of fields over one of accel's planning limits (spec/limits.h): world size,
// pipeline stages x microbatches, tokens per step.
inline constexpr const char* kOverPlanLimit = "E0419";
// Sequence parallelism needs seq_len divisible by the tensor-parallel degree.
inline constexpr const char* kSequenceNotDivisible = "E0420";
// Column- and row-parallel MLP layers split ffn_hidden_size over the tensor-parallel ranks.
inline constexpr const char* kFfnNotDivisible = "E0421";
// interleaved_1f1b: needs pipeline > 1, virtual_stages ≥ 2 and a block per model chunk; zbv:
// pipeline > 1, virtual_stages 2 and a block per model chunk.
inline constexpr const char* kBadVirtualStages = "E0422";
// model.moe: fields that contradict each other (top-k above the experts, experts without top-k,
// a capacity below the even share, experts on gpt2, no MoE block left).
inline constexpr const char* kBadMoe = "E0423";
// parallel.expert: the expert-parallel degree does not divide the experts or the ranks it is
// carved from (dp_shard × cp), or is not a multiple of cp.
inline constexpr const char* kExpertNotDivisible = "E0424";
inline constexpr const char* kTensorParallelCrossesNodes = "W0401";
inline constexpr const char* kShardingWithoutShardAxis = "W0402";
inline constexpr const char* kMicrobatchesWithoutPipeline = "W0403";
inline constexpr const char* kFp16WithoutLossScaling = "W0404";
inline constexpr const char* kLargePipelineBubble = "W0405";
inline constexpr const char* kFp16ReduceWithoutLossScaling = "W0406";
// W0407 is retired (training.sample_tokens with a tokenizer file: the sample is now decoded with
// the tokenizer); do not reuse the code.
// parallel.virtual_stages set without pipeline_schedule: interleaved_1f1b.
inline constexpr const char* kVirtualStagesWithoutInterleaving = "W0408";
// training.lr_schedule.warmup_steps above training.steps: the warmup never ends.
inline constexpr const char* kWarmupBeyondSteps = "W0409";

// Memory.
inline constexpr const char* kDoesNotFit = "E0501";

// Executor.
inline constexpr const char* kExecutorUnsupported = "E0601";
// model.init_from cannot start this plan: unreadable, or names/shapes/dtypes that do not fit.
inline constexpr const char* kPretrainedMismatch = "E0602";
// data.train.tokenizer cannot encode for this plan: unreadable, or ids beyond model.vocab_size.
inline constexpr const char* kTokenizerMismatch = "E0603";
// The checkpoint resume would pick (or --resume-from names) cannot continue under this plan: another
// model, an unsharded checkpoint under a sharded layout, or a global batch `auto` resolved otherwise.
inline constexpr const char* kResumeMismatch = "E0604";
// checkpoint.dir holds checkpoints of another run that this run would mix with (resume: never, none
// resumable, or newer steps than the one resumed).
inline constexpr const char* kCheckpointDirOccupied = "E0605";
// checkpoint.dir is not a usable directory: a file, a device, unwritable, or cannot be created.
inline constexpr const char* kCheckpointDirUnusable = "E0606";
// data.global_batch_size, set explicitly, differs from the resumed checkpoint's.
inline constexpr const char* kResumeBatchChanged = "W0601";

// `accel import`: Accelerate YAML, DeepSpeed JSON and torchtitan TOML configs (importers/).
// YAML syntax errors in an imported file keep their loader code (E0004).
inline constexpr const char* kImportSyntax = "E0701";       // JSON or TOML syntax error
inline constexpr const char* kImportWrongType = "E0702";    // a mapped key has the wrong type
// A mapped key whose value accel cannot express (an optimizer, device or layout it lacks): the
// spec would train something else, so nothing is written.
inline constexpr const char* kImportUnsupported = "E0703";
inline constexpr const char* kImportUnknownFormat = "E0704";  // not Accelerate/DeepSpeed/torchtitan
// A key with no accel equivalent whose value is not the source tool's default: not imported.
inline constexpr const char* kImportUnmappedKey = "W0701";
// A key repeated with the same value (a real Accelerate test config has `debug: false` twice).
inline constexpr const char* kImportDuplicateKey = "W0702";

// Step time: cluster.device_profile names no built-in profile (and no .json file).
inline constexpr const char* kUnknownDeviceProfile = "E0801";

}  // namespace accel::codes

#endif  // ACCEL_COMMON_DIAG_CODES_H_
