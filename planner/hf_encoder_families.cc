// Module trees of transformers' encoder-only, encoder-decoder and vision-text models, as
// modeling_{bert,roberta,vit,clip,t5,whisper}.py build them (module names, registration order,
// shapes, buffers and _no_split_modules). Parameter totals are checked against published
// counts in tests/planner/hf_architectures_test.cc.
#include <utility>

#include "planner/hf_architectures.h"

namespace accel::planner {
namespace {

ModuleNode EncLayerNorm(std::string name, int64_t dim) {
  return NormModule(std::move(name), dim, true, "LayerNorm");
}

// BertLayer / RobertaLayer: self-attention (query, key, value with biases), its output dense
// and LayerNorm, the intermediate dense (h → ffn) and the output dense (ffn → h) and LayerNorm.
ModuleNode EncBertLayer(const std::string& prefix, int64_t h, int64_t ffn) {
  ModuleNode self = ContainerModule("self", prefix + "SelfAttention",
                                    {LinearModule("query", h, h, true), LinearModule("key", h, h, true),
                                     LinearModule("value", h, h, true)});
  ModuleNode self_out = ContainerModule("output", prefix + "SelfOutput",
                                        {LinearModule("dense", h, h, true), EncLayerNorm("LayerNorm", h)});
  return ContainerModule(
      "layer", prefix + "Layer",
      {ContainerModule("attention", prefix + "Attention", {self, self_out}),
       ContainerModule("intermediate", prefix + "Intermediate", {LinearModule("dense", h, ffn, true)}),
       ContainerModule("output", prefix + "Output",
                       {LinearModule("dense", ffn, h, true), EncLayerNorm("LayerNorm", h)})});
}

// CLIPEncoderLayer: q/k/v/out projections with biases, two LayerNorms, fc1/fc2.
ModuleNode EncClipLayer(int64_t h, int64_t ffn) {
  ModuleNode attn = ContainerModule("self_attn", "CLIPAttention",
                                    {LinearModule("k_proj", h, h, true), LinearModule("v_proj", h, h, true),
                                     LinearModule("q_proj", h, h, true), LinearModule("out_proj", h, h, true)});
  ModuleNode mlp = ContainerModule("mlp", "CLIPMLP", {LinearModule("fc1", h, ffn, true),
                                                      LinearModule("fc2", ffn, h, true)});
  return ContainerModule("layer", "CLIPEncoderLayer",
                         {attn, EncLayerNorm("layer_norm1", h), mlp, EncLayerNorm("layer_norm2", h)});
}

ModuleNode EncClipEncoder(int64_t h, int64_t ffn, int64_t layers) {
  return ContainerModule("encoder", "CLIPEncoder", {RepeatedModule("layers", EncClipLayer(h, ffn), layers)});
}

// T5Attention: q, k, v, o without biases (inner = heads · d_kv); block 0 of each stack adds
// relative_attention_bias (buckets × heads).
ModuleNode EncT5Attention(std::string name, int64_t d, int64_t inner) {
  return ContainerModule(std::move(name), "T5Attention",
                         {LinearModule("q", d, inner, false), LinearModule("k", d, inner, false),
                          LinearModule("v", d, inner, false), LinearModule("o", inner, d, false)});
}

// T5LayerFF: T5DenseActDense (wi, wo) or, for feed_forward_proj "gated-*" (T5 v1.1),
// T5DenseGatedActDense (wi_0, wi_1, wo); then a T5LayerNorm (weight only).
ModuleNode EncT5FeedForward(int64_t d, int64_t ff, bool gated) {
  ModuleNode dense = gated ? ContainerModule("DenseReluDense", "T5DenseGatedActDense",
                                             {LinearModule("wi_0", d, ff, false), LinearModule("wi_1", d, ff, false),
                                              LinearModule("wo", ff, d, false)})
                           : ContainerModule("DenseReluDense", "T5DenseActDense",
                                             {LinearModule("wi", d, ff, false), LinearModule("wo", ff, d, false)});
  return ContainerModule("2", "T5LayerFF", {dense, NormModule("layer_norm", d, false, "T5LayerNorm")});
}

struct EncT5Dims {
  int64_t d = 0, inner = 0, ff = 0, buckets = 0, heads = 0;
  bool gated = false;
};

// A T5Stack: embed_tokens tied to the model's `shared` (so it owns nothing), `layers` T5Blocks
// (self-attention, cross-attention for the decoder, feed-forward), final_layer_norm.
ModuleNode EncT5Stack(const std::string& name, const EncT5Dims& t, int64_t layers, bool decoder) {
  std::vector<ModuleNode> sublayers = {ContainerModule(
      "0", "T5LayerSelfAttention",
      {EncT5Attention("SelfAttention", t.d, t.inner), NormModule("layer_norm", t.d, false, "T5LayerNorm")})};
  if (decoder) {
    sublayers.push_back(ContainerModule(
        "1", "T5LayerCrossAttention",
        {EncT5Attention("EncDecAttention", t.d, t.inner), NormModule("layer_norm", t.d, false, "T5LayerNorm")}));
  }
  sublayers.push_back(EncT5FeedForward(t.d, t.ff, t.gated));
  sublayers.back().name = std::to_string(sublayers.size() - 1);
  ModuleNode block = ContainerModule("block", "T5Block", {ContainerModule("layer", "ModuleList", sublayers)});
  ModuleNode blocks = RepeatedModule("block", block, layers);
  if (layers > 0) {
    blocks.children[0].children[0].children[0].children[0].children.push_back(
        EmbeddingModule("relative_attention_bias", t.buckets, t.heads));
  }
  ModuleNode embed{"embed_tokens", "Embedding", {}, {}};
  return ContainerModule(name, "T5Stack",
                         {embed, blocks, NormModule("final_layer_norm", t.d, false, "T5LayerNorm")});
}

// WhisperAttention: k_proj has no bias; q, v and out_proj do.
ModuleNode EncWhisperAttention(std::string name, int64_t d) {
  return ContainerModule(std::move(name), "WhisperAttention",
                         {LinearModule("k_proj", d, d, false), LinearModule("v_proj", d, d, true),
                          LinearModule("q_proj", d, d, true), LinearModule("out_proj", d, d, true)});
}

ModuleNode EncWhisperLayer(int64_t d, int64_t ffn, bool decoder) {
  std::vector<ModuleNode> parts = {EncWhisperAttention("self_attn", d), EncLayerNorm("self_attn_layer_norm", d)};
  if (decoder) {
    parts.push_back(EncWhisperAttention("encoder_attn", d));
    parts.push_back(EncLayerNorm("encoder_attn_layer_norm", d));
  }
  parts.push_back(LinearModule("fc1", d, ffn, true));
  parts.push_back(LinearModule("fc2", ffn, d, true));
  parts.push_back(EncLayerNorm("final_layer_norm", d));
  return ContainerModule("layer", decoder ? "WhisperDecoderLayer" : "WhisperEncoderLayer", parts);
}

}  // namespace

// BertModel / RobertaModel (AutoModel: with the pooler). Embeddings own two int64 buffers of
// max_position_embeddings elements (position_ids, token_type_ids), which Accelerate counts.
HfFamilyModel BuildBertFamily(HfConfigKeys& keys, bool roberta) {
  const int64_t vocab = keys.Required("vocab_size", "the vocabulary size");
  const int64_t h = keys.Required("hidden_size", "the hidden size");
  const int64_t layers = keys.Required("num_hidden_layers", "the number of layers");
  keys.Required("num_attention_heads", "the number of attention heads");
  const int64_t ffn = keys.Required("intermediate_size", "the MLP hidden size");
  const int64_t positions = keys.Required("max_position_embeddings", "the number of positions");
  const int64_t types = keys.Optional("type_vocab_size", 2);
  if (keys.Text("position_embedding_type", "absolute") != "absolute") {
    keys.Refuse("position_embedding_type",
                "accel counts only \"absolute\" (relative positions add distance embeddings)");
  }
  if (keys.Flag("is_decoder", false)) keys.Refuse("is_decoder", "accel counts the encoder only");
  if (keys.Flag("add_cross_attention", false)) {
    keys.Refuse("add_cross_attention", "accel counts the encoder only (no cross-attention)");
  }
  const std::string prefix = roberta ? "Roberta" : "Bert";
  ModuleNode embeddings = ContainerModule(
      "embeddings", prefix + "Embeddings",
      {EmbeddingModule("word_embeddings", vocab, h), EmbeddingModule("position_embeddings", positions, h),
       EmbeddingModule("token_type_embeddings", types, h), EncLayerNorm("LayerNorm", h)});
  embeddings.tensors = {{"position_ids", positions, 8, true}, {"token_type_ids", positions, 8, true}};
  ModuleNode model = ContainerModule(
      "", prefix + "Model",
      {embeddings,
       ContainerModule("encoder", prefix + "Encoder", {RepeatedModule("layer", EncBertLayer(prefix, h, ffn), layers)}),
       ContainerModule("pooler", prefix + "Pooler", {LinearModule("dense", h, h, true)})});
  return {model, std::nullopt, prefix + "Model", {prefix + "Embeddings", prefix + "Layer"}, ""};
}

// ViTModel with its pooler (AutoModel). Patches: (image_size / patch_size)², plus the CLS token.
HfFamilyModel BuildVit(HfConfigKeys& keys) {
  const int64_t h = keys.Required("hidden_size", "the hidden size");
  const int64_t layers = keys.Required("num_hidden_layers", "the number of layers");
  keys.Required("num_attention_heads", "the number of attention heads");
  const int64_t ffn = keys.Required("intermediate_size", "the MLP hidden size");
  const int64_t image = keys.Optional("image_size", 224), patch = keys.Optional("patch_size", 16);
  const int64_t channels = keys.Optional("num_channels", 3);
  const bool qkv_bias = keys.Flag("qkv_bias", true);
  const int64_t patches = patch > 0 ? (image / patch) * (image / patch) : 0;
  ModuleNode embeddings = ContainerModule(
      "embeddings", "ViTEmbeddings",
      {ContainerModule("patch_embeddings", "ViTPatchEmbeddings",
                       {ConvModule("projection", channels, h, patch * patch, true, "Conv2d")})});
  embeddings.tensors = {{"cls_token", h}, {"position_embeddings", (patches + 1) * h}};
  ModuleNode attention = ContainerModule(
      "attention", "ViTAttention",
      {ContainerModule("attention", "ViTSelfAttention",
                       {LinearModule("query", h, h, qkv_bias), LinearModule("key", h, h, qkv_bias),
                        LinearModule("value", h, h, qkv_bias)}),
       ContainerModule("output", "ViTSelfOutput", {LinearModule("dense", h, h, true)})});
  ModuleNode layer = ContainerModule(
      "layer", "ViTLayer",
      {attention, ContainerModule("intermediate", "ViTIntermediate", {LinearModule("dense", h, ffn, true)}),
       ContainerModule("output", "ViTOutput", {LinearModule("dense", ffn, h, true)}),
       EncLayerNorm("layernorm_before", h), EncLayerNorm("layernorm_after", h)});
  ModuleNode model = ContainerModule(
      "", "ViTModel",
      {embeddings, ContainerModule("encoder", "ViTEncoder", {RepeatedModule("layer", layer, layers)}),
       EncLayerNorm("layernorm", h), ContainerModule("pooler", "ViTPooler", {LinearModule("dense", h, h, true)})});
  return {model, std::nullopt, "ViTModel", {"ViTEmbeddings", "ViTLayer"}, ""};
}

// CLIPModel: the text and vision transformers, the two projections (no bias) and logit_scale.
// Defaults are CLIPTextConfig's and CLIPVisionConfig's.
HfFamilyModel BuildClip(HfConfigKeys& keys) {
  const int64_t projection = keys.Optional("projection_dim", 512);
  HfConfigKeys text = keys.Object("text_config");
  HfConfigKeys vision = keys.Object("vision_config");
  const int64_t tv = text.Optional("vocab_size", 49408), th = text.Required("hidden_size", "the text hidden size");
  const int64_t tf = text.Required("intermediate_size", "the text MLP hidden size");
  const int64_t tl = text.Required("num_hidden_layers", "the text layers");
  const int64_t tp = text.Optional("max_position_embeddings", 77);
  const int64_t vh = vision.Required("hidden_size", "the vision hidden size");
  const int64_t vf = vision.Required("intermediate_size", "the vision MLP hidden size");
  const int64_t vl = vision.Required("num_hidden_layers", "the vision layers");
  const int64_t image = vision.Optional("image_size", 224), patch = vision.Optional("patch_size", 32);
  const int64_t channels = vision.Optional("num_channels", 3);
  const int64_t positions = (patch > 0 ? (image / patch) * (image / patch) : 0) + 1;
  ModuleNode text_embeddings = ContainerModule(
      "embeddings", "CLIPTextEmbeddings",
      {EmbeddingModule("token_embedding", tv, th), EmbeddingModule("position_embedding", tp, th)});
  text_embeddings.tensors = {{"position_ids", tp, 8, true}};
  ModuleNode vision_embeddings = ContainerModule(
      "embeddings", "CLIPVisionEmbeddings",
      {ConvModule("patch_embedding", channels, vh, patch * patch, false, "Conv2d"),
       EmbeddingModule("position_embedding", positions, vh)});
  vision_embeddings.tensors = {{"class_embedding", vh}, {"position_ids", positions, 8, true}};
  ModuleNode model = ContainerModule(
      "", "CLIPModel",
      {ContainerModule("text_model", "CLIPTextTransformer",
                       {text_embeddings, EncClipEncoder(th, tf, tl), EncLayerNorm("final_layer_norm", th)}),
       ContainerModule("vision_model", "CLIPVisionTransformer",
                       {vision_embeddings, EncLayerNorm("pre_layrnorm", vh), EncClipEncoder(vh, vf, vl),
                        EncLayerNorm("post_layernorm", vh)}),
       LinearModule("visual_projection", vh, projection, false),
       LinearModule("text_projection", th, projection, false)});
  model.tensors = {{"logit_scale", 1}};
  return {model, std::nullopt, "CLIPModel",
          {"CLIPTextEmbeddings", "CLIPEncoderLayer", "CLIPVisionEmbeddings"}, ""};
}

// T5Model (AutoModel) and T5ForConditionalGeneration's lm_head (d_model → vocab, no bias),
// which adds parameters only when tie_word_embeddings is false (T5 v1.1).
HfFamilyModel BuildT5(HfConfigKeys& keys) {
  EncT5Dims t;
  const int64_t vocab = keys.Required("vocab_size", "the vocabulary size");
  t.d = keys.Required("d_model", "the hidden size");
  t.heads = keys.Required("num_heads", "the number of attention heads");
  t.inner = t.heads * keys.Required("d_kv", "the width of one attention head");
  t.ff = keys.Required("d_ff", "the MLP hidden size");
  const int64_t layers = keys.Required("num_layers", "the number of encoder layers");
  const int64_t decoder_layers = keys.Optional("num_decoder_layers", layers);
  t.buckets = keys.Optional("relative_attention_num_buckets", 32);
  const std::string proj = keys.Text("feed_forward_proj", "relu");
  t.gated = proj.rfind("gated-", 0) == 0;
  const std::string act = t.gated ? proj.substr(6) : proj;
  if (act != "relu" && act != "gelu" && act != "silu" && act != "gelu_new") {
    keys.Refuse("feed_forward_proj", "accel counts relu, gelu, gelu_new or silu, optionally gated-");
  }
  const bool tied = keys.Flag("tie_word_embeddings", true);
  ModuleNode model = ContainerModule("", "T5Model",
                                     {EmbeddingModule("shared", vocab, t.d), EncT5Stack("encoder", t, layers, false),
                                      EncT5Stack("decoder", t, decoder_layers, true)});
  std::optional<ModuleNode> head;
  if (!tied) head = LinearModule("lm_head", t.d, vocab, false);
  return {model, head, "T5ForConditionalGeneration", {"T5Block"}, ""};
}

// WhisperModel (AutoModel). WhisperForConditionalGeneration's proj_out is tied to the decoder's
// embed_tokens, so the counts agree. Both position tables are parameters (frozen, still
// counted by transformers' num_parameters and by Accelerate).
HfFamilyModel BuildWhisper(HfConfigKeys& keys) {
  const int64_t vocab = keys.Required("vocab_size", "the vocabulary size");
  const int64_t d = keys.Required("d_model", "the hidden size");
  const int64_t enc_layers = keys.Required("encoder_layers", "the encoder layers");
  const int64_t dec_layers = keys.Required("decoder_layers", "the decoder layers");
  const int64_t enc_ffn = keys.Required("encoder_ffn_dim", "the encoder MLP hidden size");
  const int64_t dec_ffn = keys.Required("decoder_ffn_dim", "the decoder MLP hidden size");
  const int64_t mels = keys.Optional("num_mel_bins", 80);
  const int64_t source = keys.Optional("max_source_positions", 1500);
  const int64_t target = keys.Optional("max_target_positions", 448);
  ModuleNode encoder = ContainerModule(
      "encoder", "WhisperEncoder",
      {ConvModule("conv1", mels, d, 3, true, "Conv1d"), ConvModule("conv2", d, d, 3, true, "Conv1d"),
       EmbeddingModule("embed_positions", source, d),
       RepeatedModule("layers", EncWhisperLayer(d, enc_ffn, false), enc_layers), EncLayerNorm("layer_norm", d)});
  ModuleNode positions = EmbeddingModule("embed_positions", target, d);
  positions.class_name = "WhisperPositionalEmbedding";
  ModuleNode decoder = ContainerModule(
      "decoder", "WhisperDecoder",
      {EmbeddingModule("embed_tokens", vocab, d), positions,
       RepeatedModule("layers", EncWhisperLayer(d, dec_ffn, true), dec_layers), EncLayerNorm("layer_norm", d)});
  return {ContainerModule("", "WhisperModel", {encoder, decoder}), std::nullopt, "WhisperModel",
          {"WhisperEncoderLayer", "WhisperDecoderLayer"}, ""};
}

}  // namespace accel::planner
