#!/usr/bin/env python3
"""Writes the libFuzzer dictionaries fuzz/dict/*.dict and the checked-in seed inputs under fuzz/corpus/<target>/ for the formats the repository
has no files of: safetensors and sharded checkpoints, checkpoint manifests and rank lists,
--set arguments, training data, worker environments, device profiles as `accel calibrate` writes
them, and token ids to decode. Deterministic; run it after changing a
format, and commit the result. Seeds that exist as repository files (job specs, config.json) are
not copied here: fuzz/run.sh collects them at fuzz time, so they never go stale.

  python3 fuzz/make_seeds.py                 # rewrite the seeds above
  python3 fuzz/make_seeds.py --accel build-core/cli/accel
                                             # also the worker_plan_fuzzer plans (`accel plan
                                             # --format binpb` of small example jobs) and
                                             # the tokenizer_decode_fuzzer ids (`accel tokenize`)
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
SHARD_SEPARATOR = b"--accel-fuzz-next-file--"


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283

DTYPE_SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def safetensors(tensors, metadata=None) -> bytes:
    """tensors: list of (name, dtype, shape, data bytes), laid out in order."""
    header, offset = {}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors)


def floats(values) -> bytes:
    return struct.pack("<%df" % len(values), *values)


def shard(slices) -> bytes:
    """slices: list of (name, dtype, global shape, begin, end, data)."""
    index = {name: {"shape": shape, "range": [b, e]} for name, _, shape, b, e, _ in slices}
    return safetensors([(name, dtype, [e - b], data) for name, dtype, _, b, e, data in slices],
                       {"format": "accel-shard", "version": "1", "slices": json.dumps(index, separators=(",", ":"))})


def write(target: str, name: str, data: bytes) -> None:
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def manifest(files) -> bytes:
    entries = [{"name": n, "size_bytes": len(d), "crc32c": "%08x" % crc32c(d)} for n, d in files]
    return json.dumps({"format": "accel-checkpoint", "version": 1, "step": 1, "files": entries}, indent=2).encode()


def profile_json(v) -> bytes:
    """A device profile as spec::DeviceProfileToJson writes it (what `accel calibrate` writes)."""
    g17 = lambda x: "%.17g" % x
    out = "{\n"
    for key in PROFILE_STRING_KEYS:
        out += "  %s: %s,\n" % (json.dumps(key), json.dumps(v[key], ensure_ascii=False))
    for key in PROFILE_NUMBER_KEYS:
        out += "  %s: %s,\n" % (json.dumps(key), g17(v[key]))
    out += '  "shared_cores_per_node": %d' % v.get("shared_cores_per_node", 0)
    if v.get("matmul_grids"):
        out += ',\n  "matmul_grids": ['
        for g, grid in enumerate(v["matmul_grids"]):
            out += "\n    {" if g == 0 else ",\n    {"
            out += '"dtype": %s, "layout": %s, "sizes": %s,\n     "flops_per_second": [' % (
                json.dumps(grid["dtype"]), json.dumps(grid.get("layout", "nn")),
                json.dumps(grid["sizes"], separators=(",", ":")))
            for i, f in enumerate(grid["flops_per_second"]):
                out += ("" if i == 0 else (",\n       " if i % 6 == 0 else ", ")) + g17(f)
            out += "]}"
        out += "\n  ]"
    if v.get("elementwise_costs"):
        out += ',\n  "elementwise_costs": ['
        for i, c in enumerate(v["elementwise_costs"]):
            out += ("\n    {" if i == 0 else ",\n    {") + '"op": %s, "dtype": %s, ' % (
                json.dumps(c["op"]), json.dumps(c["dtype"]))
            out += '"forward_seconds_per_element": %s, "backward_seconds_per_element": %s}' % (
                g17(c["forward_seconds_per_element"]), g17(c["backward_seconds_per_element"]))
        out += "\n  ]"
    if v.get("worker_scaling"):
        out += ',\n  "worker_scaling": ['
        for i, w in enumerate(v["worker_scaling"]):
            out += ("\n    {" if i == 0 else ",\n    {") + '"workers_per_node": %d, "efficiency": %s}' % (
                w["workers_per_node"], g17(w["efficiency"]))
        out += "\n  ]"
    return (out + "\n}\n").encode()


PROFILE_STRING_KEYS = ["name", "source"]
PROFILE_NUMBER_KEYS = ["matmul_fp32_flops_per_second", "matmul_bf16_flops_per_second",
                       "matmul_fp16_flops_per_second", "memory_bytes_per_second",
                       "intra_node_bytes_per_second", "intra_node_latency_seconds",
                       "inter_node_bytes_per_second", "inter_node_latency_seconds",
                       "matmul_efficiency", "memory_efficiency", "link_efficiency"]
ELEMENTWISE_OPS = ["layer_norm", "rms_norm", "gelu_tanh", "silu_mul", "causal_softmax", "cross_entropy",
                  "rotary", "residual_add", "bias_add"]


def grid(dtype, sizes, peak, layout="nn"):
    """A matmul grid whose throughput grows with the smallest of m, n, k, up to `peak`."""
    figures = [peak * min(m, n, k) / (min(m, n, k) + 64.0) for m in sizes for n in sizes for k in sizes]
    return {"dtype": dtype, "layout": layout, "sizes": sizes, "flops_per_second": figures}


def write_profiles():
    """device_profile_fuzzer: profiles as `accel calibrate` writes them (and as the tests build
    them), then bad ones (the inputs of tests/spec/device_profile_file_test.cc)."""
    calibrated = {
        "name": "cpu-calibrated",
        "source": "accel calibrate on vm: 512x512 matmuls and a 64 MiB copy on one thread (per core, 2 cores), "
                  "Gloo all-reduce over 2..2 local processes fitted to the ring model; inter-node not measured "
                  "(copied from intra-node); no fp16 CPU matmul here: fp32 figure used",
        "matmul_fp32_flops_per_second": 85230754967.274323, "matmul_bf16_flops_per_second": 198201548189.69312,
        "matmul_fp16_flops_per_second": 85230754967.274323, "memory_bytes_per_second": 25526986182.253063,
        "intra_node_bytes_per_second": 1183867958.8529513, "intra_node_latency_seconds": 4.8481329814212561e-05,
        "inter_node_bytes_per_second": 1183867958.8529513, "inter_node_latency_seconds": 4.8481329814212561e-05,
        "matmul_efficiency": 1, "memory_efficiency": 1, "link_efficiency": 1, "shared_cores_per_node": 2}
    write("device_profile_fuzzer", "calibrated_cpu.json", profile_json(calibrated))
    calibrated["source"] = calibrated["source"].replace(
        "2 cores), ", "2 cores); matmul grids over 3 sizes from 64 to 256 and elementwise op costs with one "
        "thread on every core at once; ")
    calibrated["matmul_grids"] = [grid("fp32", [64, 128, 256], 8.5e10), grid("bf16", [64, 256], 1.9e11),
                                  grid("bf16", [64, 256], 6e10, "nt"), grid("bf16", [64, 256], 1.8e11, "tn")]
    calibrated["elementwise_costs"] = [
        {"op": op, "dtype": dtype, "forward_seconds_per_element": 1e-9 * (i + 1) * (2 if dtype == "fp32" else 3),
         "backward_seconds_per_element": 1.5e-9 * (i + 1) * (2 if dtype == "fp32" else 3)}
        for i, op in enumerate(ELEMENTWISE_OPS) for dtype in ("fp32", "bf16")]
    calibrated["worker_scaling"] = [{"workers_per_node": 1, "efficiency": 0.62},
                                    {"workers_per_node": 2, "efficiency": 1},
                                    {"workers_per_node": 4, "efficiency": 0.81}]
    write("device_profile_fuzzer", "calibrated_grids_and_costs.json", profile_json(calibrated))
    sample = {  # Sample() of the unit test, with its grids and costs
        "name": "cpu-calibrated", "source": 'accel calibrate on "host"',
        "matmul_fp32_flops_per_second": 1.2345678901234567e11, "matmul_bf16_flops_per_second": 2e10,
        "matmul_fp16_flops_per_second": 3e10, "memory_bytes_per_second": 1.5e10,
        "intra_node_bytes_per_second": 2.25e9, "intra_node_latency_seconds": 4.5e-5,
        "inter_node_bytes_per_second": 1e9, "inter_node_latency_seconds": 1e-4,
        "matmul_efficiency": 1, "memory_efficiency": 0.75, "link_efficiency": 0.5, "shared_cores_per_node": 2,
        "matmul_grids": [{"dtype": "fp32", "sizes": [64, 256], "flops_per_second": [1, 2, 3, 4, 5, 6, 7, 8.123456789012345e10]},
                         {"dtype": "bf16", "sizes": [16, 32], "flops_per_second": [9] * 8}],
        "elementwise_costs": [{"op": "gelu_tanh", "dtype": "fp32", "forward_seconds_per_element": 4.25e-9,
                               "backward_seconds_per_element": 6.5e-9},
                              {"op": "gelu_tanh", "dtype": "bf16", "forward_seconds_per_element": 1.0000000000000002e-8,
                               "backward_seconds_per_element": 2e-8}]}
    write("device_profile_fuzzer", "test_sample.json", profile_json(sample))
    # Written by hand: short numbers, no shared_cores_per_node, keys in another order, UTF-8 text.
    hand = {"source": "hand written: H100 SXM datasheet \u00d7 0.8", "name": "h100-lab \u2014 rack 3",
            "matmul_fp32_flops_per_second": 6.7e13, "matmul_bf16_flops_per_second": 9.89e14,
            "matmul_fp16_flops_per_second": 9.89e14, "memory_bytes_per_second": 3.35e12,
            "intra_node_bytes_per_second": 4.5e11, "intra_node_latency_seconds": 5e-6,
            "inter_node_bytes_per_second": 5e10, "inter_node_latency_seconds": 1e-5,
            "matmul_efficiency": 0.8, "memory_efficiency": 0.9, "link_efficiency": 0.7}
    write("device_profile_fuzzer", "hand_written.json", json.dumps(hand, indent=1).encode())
    bad = {
        "bad_grids.json": ', "matmul_grids": [{"dtype": "int8", "sizes": [4, 2], "flops_per_second": [1], "x": 1}, '
                          '{"dtype": "fp32", "sizes": [1, 2], "flops_per_second": [1, 1, 1, 1, 1, 1, 1, 0]}, '
                          '{"dtype": "fp32", "layout": "tt", "sizes": [1, 2], "flops_per_second": [1, 1, 1, 1, 1, 1, 1, 1]}]',
        "bad_costs.json": ', "elementwise_costs": [{"op": "gelu_tan", "dtype": "fp64", '
                          '"forward_seconds_per_element": 0, "y": 1}, {"op": "rms_norm", "dtype": "fp32", '
                          '"forward_seconds_per_element": 1e-9, "backward_seconds_per_element": 2e-9}]',
        "bad_worker_scaling.json": ', "worker_scaling": [3, {"workers_per_node": 0, "efficiency": -1, '
                                   '"speed": 2}, {"workers_per_node": 4, "efficiency": 0.8}, '
                                   '{"workers_per_node": 4, "efficiency": 0.9}]',
    }
    sample_plain = dict(sample)
    del sample_plain["matmul_grids"], sample_plain["elementwise_costs"]
    base = profile_json(sample_plain).decode()
    for name, extra in bad.items():
        write("device_profile_fuzzer", name, (base[:base.rindex("}")] + extra + "}\n").encode())
    write("device_profile_fuzzer", "misspelt_key.json", b'{"name": "x", "sorce": "y"}')
    write("device_profile_fuzzer", "not_an_object.json", b"[1]")


DECODE_TEXTS = {
    # name: text (tokenized by `accel tokenize`, BOS/EOS as each tokenizer adds them)
    "fortune": None,  # the first fortunes of tests/testdata/tokenizers/fortunes/fortunes
    "unicode": "na\u00efve caf\u00e9 \u2014 \u6771\u4eac \U0001f642 <|endoftext|> It's 12345\n\n\tx  \u2581y\n",
}


def decode_seed(flag: int, ids) -> bytes:
    return bytes([flag]) + struct.pack("<%dI" % len(ids), *ids)


def write_decode_seeds(accel):
    """tokenizer_decode_fuzzer: flag byte (bit 0 skip_special_tokens, (flag >> 1) % 3: 0 tiny_bpe.json,
    1 fortunes_bpe.model, 2 a decoder) then uint32 ids, or a decoder JSON and tokens."""
    target = "tokenizer_decode_fuzzer"
    data = os.path.join(ROOT, "tests", "data", "tokenizers")
    # Ids no encoding gives: bytes that are not UTF-8, special and missing ids, ids at and past id_limit.
    write(target, "bytelevel_broken_utf8", decode_seed(0, [0xE6, 0x97, 0x61, 0xFF, 0x62, 0x80, 0xED, 0xA0, 0x80,
                                                           273, 5000, 276, 0xFFFFFFFF, 274, 0xE6, 0x97, 0xA5, 275]))
    # spm_decode's pieces (tests/tokenizers/decode_test.cc): 906 "\u2581", 546 "\u2581It", 1 <s>, 2 </s>,
    # 0 <unk>, 233 <0xE6>, 154 <0x97>, 168 <0xA5>.
    write(target, "sentencepiece_pieces", decode_seed(2, [1, 906, 906, 546, 0, 906, 546, 233, 154, 906, 546,
                                                          233, 154, 168, 2, 1000, 5000, 0x80000000]))
    if accel:
        with open(os.path.join(data, "fortunes", "fortunes"), encoding="utf-8") as f:
            fortune = f.read(400)
        with tempfile.TemporaryDirectory() as tmp:
            for tokenizer, mode in (("tiny_bpe.json", 0), ("fortunes_bpe.model", 1)):
                for name in DECODE_TEXTS:
                    text = DECODE_TEXTS[name] or fortune
                    with open(os.path.join(tmp, "t.txt"), "w", encoding="utf-8") as f:
                        f.write(text)
                    out = os.path.join(tmp, "ids.bin")
                    subprocess.run([os.path.abspath(accel), "tokenize", "--tokenizer", os.path.join(data, tokenizer),
                                    "--input", os.path.join(tmp, "t.txt"), "-o", out, "--dtype", "uint32",
                                    "--threads", "1"], check=True, stdout=subprocess.DEVNULL)
                    with open(out, "rb") as f:
                        ids = f.read()
                    kind = "bytelevel" if mode == 0 else "sentencepiece"
                    write(target, "%s_%s" % (kind, name), bytes([2 * mode]) + ids)
                    write(target, "%s_%s_skip_special" % (kind, name), bytes([2 * mode + 1]) + ids)
    # Decoders: tiny_bpe.json's, Llama-2's and Mistral's, Metaspace, and one accel does not support.
    separator = b"\n--accel-fuzz-tokens--\n"
    llama2 = ('{"type": "Sequence", "decoders": [\n {"type": "Replace", "pattern": {"String": "\u2581"}, '
              '"content": " "},\n {"type": "ByteFallback"}, {"type": "Fuse"},\n {"type": "Strip", "content": " ", '
              '"start": 1, "stop": 0}]}')
    sp_tokens = "\n".join(["<s>", "\u2581Hello", "\u2581world", "<0x0A>", "<0xE6>", "<0x97>", "<0xA5>",
                           "<0xE6>", "<0x97>", "\u2581", "\u2581", "Hello", "<unk>", "</s>"]).encode()
    decoders = {
        "decoder_byte_level": ('{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}',
                               "\n".join(["<s>", "It", "'s", "\u0120caf", "\u00c3\u00a9", "\u0120\u00e6\u0139",
                                          "\u00a5", "\u00ff", "\u010a", "<|endoftext|>", "a b"]).encode()),
        "decoder_llama2": (llama2, sp_tokens),
        "decoder_metaspace": ('{"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", '
                              '"split": false}', sp_tokens),
        "decoder_metaspace_old": ('{"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": false}',
                                  sp_tokens),
        "decoder_strip_replace": ('{"type": "Sequence", "decoders": [{"type": "Strip", "content": "\u00e9", "start": 2, '
                                  '"stop": 3}, {"type": "Replace", "pattern": {"String": "ab"}, "content": "\u2581"}]}',
                                  "\n".join(["\u00e9\u00e9\u00e9abab\u00e9", "ab", "", "\u00e9"]).encode()),
        "decoder_unsupported": ('{"type": "Sequence", "decoders": [{"type": "ByteFallback"},\n'
                                ' {"type": "WordPiece", "prefix": "##"}]}', b"a"),
    }
    for name, (decoder, tokens) in decoders.items():
        write(target, name, bytes([4]) + decoder.encode() + separator + tokens)


def schema_words():
    """(keys, dotted paths, enum values) of schemas/accel-job.schema.json."""
    with open(os.path.join(ROOT, "schemas", "accel-job.schema.json")) as f:
        schema = json.load(f)
    keys, paths, enums = set(), set(), set()

    def walk(node, prefix):
        if isinstance(node, dict):
            for key, value in node.get("properties", {}).items():
                keys.add(key)
                paths.add(prefix + key)
                walk(value, prefix + key + ".")
            enums.update(e for e in node.get("enum", []) if isinstance(e, str))
            for key, value in node.items():
                if key != "properties":
                    walk(value, prefix)
        elif isinstance(node, list):
            for value in node:
                walk(value, prefix)

    walk(schema, "")
    return sorted(keys), sorted(paths), sorted(enums)


def dict_entry(word: bytes) -> str:
    """A quoted libFuzzer dictionary entry: printable ASCII as is, \\ and \" escaped, others \\xHH."""
    out = ""
    for b in word:
        if b in (0x5C, 0x22):
            out += "\\" + chr(b)
        elif 0x20 <= b < 0x7F:
            out += chr(b)
        else:
            out += "\\x%02X" % b
    return '"' + out + '"'


def write_dict(name, header, words):
    with open(os.path.join(ROOT, "fuzz", "dict", name), "w") as f:
        f.write("# " + header + "\n# Generated by fuzz/make_seeds.py; libFuzzer -dict= format.\n")
        for word in words:
            f.write(dict_entry(word if isinstance(word, bytes) else word.encode()) + "\n")


def write_dicts():
    os.makedirs(os.path.join(ROOT, "fuzz", "dict"), exist_ok=True)
    keys, paths, enums = schema_words()
    yaml_tokens = [": ", "\n  ", "- ", "{", "}", "[", "]", ", ", "&a ", "*a", "<<: ", "---", "...", "#", "~",
                   "null", "true", "false", "auto", "1.0e-3", ".inf", ".nan", "0x10", "1_000", "8GiB", "500MB",
                   "16KiB", "1TB", "9223372036854775808", "-1", "0", "65536", "\"", "'", "|\n", ">\n", "!!str ",
                   "? ", "\t"]
    write_dict("spec.dict", "Job files: the schema's keys and enum values, and YAML syntax.",
               [k + ": " for k in keys] + enums + yaml_tokens +
               ["../models/gpt2-xl/config.json", "../models/Llama-2-7b-hf/config.json"])
    write_dict("overrides.dict", "--set arguments: the schema's dotted keys, enum values and YAML values.",
               [p + "=" for p in paths] + enums + ["[0]=", "[1]=", "[0.9, 0.95]", "\n"] + yaml_tokens)
    write_dict("json.dict", "JSON readers: config.json, safetensors headers, checkpoint manifests and lists.",
               ["{", "}", "[", "]", ":", ",", "\"", "null", "true", "false", "-1", "1e308", "18446744073709551615",
                "9223372036854775807", "\\u0000",
                # config.json (spec/model_config.cc)
                "\"model_type\"", "\"gpt2\"", "\"llama\"", "\"mistral\"", "\"qwen2\"", "\"n_embd\"", "\"n_layer\"",
                "\"n_head\"", "\"n_positions\"", "\"n_ctx\"", "\"n_inner\"", "\"vocab_size\"",
                "\"layer_norm_epsilon\"", "\"tie_word_embeddings\"", "\"hidden_size\"", "\"num_hidden_layers\"",
                "\"num_attention_heads\"", "\"num_key_value_heads\"", "\"intermediate_size\"",
                "\"max_position_embeddings\"", "\"rms_norm_eps\"", "\"rope_theta\"", "\"attention_bias\"",
                # safetensors and shard files
                "\"dtype\"", "\"shape\"", "\"data_offsets\"", "\"__metadata__\"", "\"F32\"", "\"BF16\"", "\"F16\"",
                "\"F64\"", "\"I64\"", "\"U8\"", "\"BOOL\"", "\"format\"", "\"accel-shard\"", "\"version\"",
                "\"slices\"", "\"range\"", "--accel-fuzz-next-file--",
                # checkpoint manifests and rank lists
                "\"accel-checkpoint\"", "\"accel-rank-files\"", "\"files\"", "\"name\"", "\"size_bytes\"",
                "\"crc32c\"", "\"rank\"", "\"step\"", "\"model.safetensors\"", "\"config.json\"", "\"a.bin\"",
                "\"../\"", "\"/\"", "\".\"", "\"..\""])
    write_dict("device_profile.dict", "Device-profile JSON (spec/device_profile_file.h): keys, dtypes, ops.",
               ["{", "}", "[", "]", ":", ",", "\"", "null", "true", "false", "-1", "0", "1", "0.5", "1e308",
                "1e-320", "1e400", "-0", "1048576", "1048577", "9223372036854775808", "18446744073709551615",
                "\\u0000", "\\u00e9", "\u00e9", "\U0001f642"] +
               ['"%s"' % k for k in PROFILE_STRING_KEYS + PROFILE_NUMBER_KEYS] +
               ['"blocking_collective_seconds"', '"adamw_seconds_per_parameter"', '"shared_core_bucket_overlap"',
                '"shared_cores_per_node"', '"matmul_grids"', '"elementwise_costs"', '"dtype"', '"sizes"',
                '"flops_per_second"', '"op"', '"forward_seconds_per_element"', '"backward_seconds_per_element"',
                '"fp32"', '"bf16"', '"fp16"', '"layout"', '"nn"', '"nt"', '"tn"', '"worker_scaling"', '"workers_per_node"', '"efficiency"'] +
               ['"%s"' % op for op in ELEMENTWISE_OPS])
    write_dict("tokenizer_decode.dict", "tokenizer_decode_fuzzer: decoder JSON and the tokens decoders rewrite.",
               ["{", "}", "[", "]", ":", ",", "\"", "null", "true", "false", "0", "1", "-1", "18446744073709551615",
                '"type"', '"ByteLevel"', '"ByteFallback"', '"Fuse"', '"Strip"', '"Replace"', '"Metaspace"',
                '"Sequence"', '"decoders"', '"pattern"', '"String"', '"Regex"', '"content"', '"start"', '"stop"',
                '"replacement"', '"prepend_scheme"', '"always"', '"first"', '"never"', '"add_prefix_space"',
                "\\u2581", "\u2581", "<0x", "<0xE6>", "<0x97>", "<0xA5>", "<0xFF>", "<0x0A>", "\u0120", "\u010a",
                "<s>", "</s>", "<unk>", "<|endoftext|>", "\n--accel-fuzz-tokens--\n", "\n",
                # little-endian uint32 ids: 0, past any id, <|endoftext|> and <s> of tiny_bpe.json, <s>, 1000
                b"\x00\x00\x00\x00", b"\xff\xff\xff\xff", b"\x11\x01\x00\x00", b"\x12\x01\x00\x00",
                b"\x01\x00\x00\x00", b"\xe8\x03\x00\x00"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--accel", help="an accel binary, to regenerate the worker plans too")
    args = parser.parse_args()
    write_dicts()
    write_profiles()
    write_decode_seeds(args.accel)

    # safetensors_fuzzer
    w = floats([1, 2, 3, 4, 5, 6])
    write("safetensors_fuzzer", "f32_2x3.safetensors", safetensors([("w", "F32", [2, 3], w)]))
    write("safetensors_fuzzer", "mixed_with_metadata.safetensors", safetensors([
        ("transformer.wte.weight", "BF16", [4, 2], bytes(range(16))),
        ("step", "I64", [], struct.pack("<q", 7)),
        ("mask", "BOOL", [3], b"\x01\x00\x01"),
        ("bias", "F16", [2], b"\x00\x3c\x00\x40"),
    ], {"format": "pt"}))
    write("safetensors_fuzzer", "empty_tensor.safetensors", safetensors([("e", "F32", [0, 5], b""), ("s", "U8", [1], b"\x05")]))
    write("safetensors_fuzzer", "no_tensors.safetensors", safetensors([], {"k": "v"}))

    # shard_file_fuzzer: one or more files separated by SHARD_SEPARATOR
    h0 = shard([("w", "F32", [4, 2], 0, 4, floats([0, 1, 2, 3])), ("b", "F32", [2], 0, 2, floats([9, 8]))])
    h1 = shard([("w", "F32", [4, 2], 4, 8, floats([4, 5, 6, 7])), ("optimizer.exp_avg.w", "F32", [4, 2], 0, 8, floats([0] * 8))])
    write("shard_file_fuzzer", "one_shard", shard([("w", "F32", [2, 2], 0, 4, floats([1, 2, 3, 4]))]))
    write("shard_file_fuzzer", "two_shards", h0 + SHARD_SEPARATOR + h1)
    write("shard_file_fuzzer", "three_shards_empty_range", h0 + SHARD_SEPARATOR + h1 + SHARD_SEPARATOR +
          shard([("b", "F32", [2], 2, 2, b"")]))
    write("shard_file_fuzzer", "legacy_model", safetensors([("w", "BF16", [2, 2], bytes(range(8)))], {"format": "pt"}))

    # checkpoint_manifest_fuzzer: 'M' + manifest.json (beside model.safetensors "hello" and config.json "{}\n"),
    # 'R' + rank-00000.files.json (beside a.bin "hello")
    write("checkpoint_manifest_fuzzer", "manifest_ok", b"M" + manifest([("model.safetensors", b"hello"), ("config.json", b"{}\n")]))
    write("checkpoint_manifest_fuzzer", "manifest_bad_crc", b"M" + manifest([("model.safetensors", b"hellO")]))
    write("checkpoint_manifest_fuzzer", "manifest_not_object", b"M[1, 2]")
    rank_list = {"format": "accel-rank-files", "rank": 0,
                 "files": [{"name": "a.bin", "size_bytes": 5, "crc32c": "%08x" % crc32c(b"hello")}]}
    write("checkpoint_manifest_fuzzer", "rank_list_ok", b"R" + json.dumps(rank_list, indent=2).encode())
    rank_list["rank"] = 1
    write("checkpoint_manifest_fuzzer", "rank_list_wrong_rank", b"R" + json.dumps(rank_list).encode())

    # overrides_fuzzer: one --set argument per line
    for name, text in {
        "tensor": "parallel.tensor=2",
        "betas_item": "training.optimizer.betas[1]=0.99",
        "size": "cluster.device_memory=16GiB",
        "auto": "data.global_batch_size=auto\ndata.grad_accum_steps=2",
        "llama": "model.arch=llama\nmodel.ffn_hidden_size=256\nmodel.num_kv_heads=2",
        "pipeline": "parallel.pipeline=2\nparallel.data_replicate=2\nparallel.pipeline_schedule=gpipe\nparallel.pipeline_microbatches=4",
        "zero3": "sharding.stage=3\nparallel.data_shard=auto\nparallel.data_replicate=1",
        "list_value": "training.optimizer.betas=[0.8, 0.9]",
        "bad": "training.lr=1\nparallel=2\nmodel.hidden_size[0]=1\n=3\ncluster.nodes=",
        "precision": "precision.compute=fp16\nprecision.loss_scaling=dynamic\ncluster.device=cuda",
    }.items():
        write("overrides_fuzzer", name, text.encode())

    # corpus_fuzzer: byte 0 = format (0 text, 1 uint16 tokens, 2 uint32 tokens), byte 1 = vocabulary choice
    write("corpus_fuzzer", "text_ascii", b"\x00\x00Q: Why did the chicken cross the road?\nA: To get to the other side.\n")
    write("corpus_fuzzer", "text_utf8", "\x00\x00naïve café — 東京 🙂\n".encode())
    write("corpus_fuzzer", "tokens_u16", b"\x01\x03" + struct.pack("<6H", 0, 1, 50256, 464, 3290, 13))
    write("corpus_fuzzer", "tokens_u32", b"\x02\x06" + struct.pack("<4I", 0, 1, 100000, 4194303))

    # launcher_env_fuzzer: NAME=VALUE lines; the last line is also a SLURM node list
    write("launcher_env_fuzzer", "worker", b"RANK=1\nWORLD_SIZE=4\nLOCAL_RANK=1\nLOCAL_WORLD_SIZE=2\nGROUP_RANK=0\n"
          b"MASTER_ADDR=127.0.0.1\nMASTER_PORT=29500\nACCEL_RUN_DIR=runs/x\nACCEL_NUM_THREADS=2\n"
          b"ACCEL_LAUNCH_UNIX_NS=1700000000000000000\nnode[07-09,12],gpu1")
    write("launcher_env_fuzzer", "slurm", b"SLURM_PROCID=3\nSLURM_NODEID=1\nSLURM_LOCALID=1\nSLURM_NTASKS=4\n"
          b"SLURM_NNODES=2\nSLURM_JOB_ID=123456\nSLURM_JOB_NODELIST=gpu-a[3-4]\ngpu-a[3-4]")
    write("launcher_env_fuzzer", "slurm_fallbacks", b"SLURM_PROCID=0\nSLURM_NODEID=0\nSLURM_LOCALID=0\nSLURM_NPROCS=1\n"
          b"SLURM_JOB_NUM_NODES=1\nhost1,host2")

    if args.accel:
        specs = os.path.join("examples", "specs")  # relative: plans record the path given
        small = os.path.join(specs, "gpt2-small_cpu2_dp.yaml")
        plans = {
            "gpt2-small_cpu2_dp": [small],
            "gpt2-mini_cpu4_hybrid": [os.path.join(specs, "gpt2-mini_cpu4_hybrid.yaml")],
            "gpt2-mini_cpu4_zero2": [os.path.join(specs, "gpt2-mini_cpu4_zero2.yaml")],
            "gpt2-mini_cpu4_zero3": [os.path.join(specs, "gpt2-mini_cpu4_zero3.yaml")],
            "llama-mini_cpu2_bf16": [os.path.join(specs, "llama-mini_cpu2_bf16.yaml")],
            "gpt2_pp2_1f1b": [small, "--set", "parallel.pipeline=2", "--set", "parallel.data_replicate=1"],
            "gpt2_pp2_gpipe": [small, "--set", "parallel.pipeline=2", "--set", "parallel.data_replicate=2",
                               "--set", "cluster.devices_per_node=4", "--set", "parallel.pipeline_schedule=gpipe",
                               "--set", "parallel.pipeline_microbatches=4"],
            "gpt2_tp2": [small, "--set", "parallel.tensor=2", "--set", "parallel.data_replicate=1"],
            # 2 key/value heads at tp 4: replicated heads (Parameter.tp_replicas, the tp_kv group).
            "llama_tp4_kv_replicated": [os.path.join(specs, "llama-mini_cpu2_bf16.yaml"), "--set", "parallel.tensor=4",
                                        "--set", "parallel.data_shard=1", "--set", "sharding.stage=0",
                                        "--set", "cluster.devices_per_node=4"],
        }
        os.makedirs(os.path.join(CORPUS, "worker_plan_fuzzer"), exist_ok=True)
        for name, argv in plans.items():
            out = os.path.join(CORPUS, "worker_plan_fuzzer", name + ".binpb")
            subprocess.run([os.path.abspath(args.accel), "plan", *argv, "--format", "binpb", "-o", out],
                           check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
