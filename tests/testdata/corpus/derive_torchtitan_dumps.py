#!/usr/bin/env python3
"""Derives the JSON that torchtitan's `Trainer.Config.to_dict()` writes with
`--debug.save_config_file` for a few registry configs, without torch (torchtitan cannot be
installed here). Run from anywhere with the torchtitan repository's path:

    derive_torchtitan_dumps.py TORCHTITAN_REPO configs/torchtitan/2026-02_config_dumps
    derive_torchtitan_dumps.py TORCHTITAN_REPO --defaults   # exporters/torchtitan_defaults.cc

Every field name, field order and default is read from the dataclasses at commit 9810191bb
(PR #2386, the first commit of the Python config registry) with `ast`, not typed in by hand;
only the arguments each registry function passes (config_registry.py) are transcribed below.
`to_dict` there writes `model_spec` as {name, flavor} and every other field with
dataclasses.asdict (fields in declaration order, a subclass's new fields after its bases'),
then `json.dump(..., indent=2)` (no trailing newline).
"""
import ast
import json
import subprocess
import sys

COMMIT = "9810191bbb0385d8ac91cd31abbc7f4156a0d462"


def source(repo, path):
    return subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def class_fields(repo, path, dotted):
    """[(name, default)] of the dataclass `dotted` ("Outer.Config" or "Name") in `path`."""
    tree = ast.parse(source(repo, path))
    scope = tree.body
    node = None
    for part in dotted.split("."):
        node = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == part)
        scope = node.body
    out = []
    for n in node.body:
        if not isinstance(n, ast.AnnAssign) or "ClassVar" in ast.unparse(n.annotation):
            continue
        out.append((n.target.id, n.value))
    return out


def value_of(node, factories):
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "field":
        kw = {k.arg: k.value for k in node.keywords}
        factory = kw["default_factory"]
        if isinstance(factory, ast.Lambda):
            return value_of(factory.body, factories)
        name = ast.unparse(factory)
        return {"list": [], "dict": {}}.get(name) if name in ("list", "dict") else factories[name]()
    if isinstance(node, ast.Call):  # X.Config(k=v): a nested config built in a default
        built = factories[ast.unparse(node.func)]()
        for k in node.keywords:
            built[k.arg] = ast.literal_eval(k.value)
        return built
    return ast.literal_eval(node)


def build(repo, chain, factories):
    """A dict of the fields of the classes in `chain` (base first), defaults applied."""
    d = {}
    for path, dotted in chain:
        for name, default in class_fields(repo, path, dotted):
            d[name] = value_of(default, factories)
    return d


def factories_for(repo):
    f = {}
    cfg = "torchtitan/config/configs.py"
    dl = "torchtitan/components/dataloader.py"
    text = "torchtitan/hf_datasets/text_datasets.py"
    val = "torchtitan/components/validate.py"
    tok = "torchtitan/components/tokenizer.py"
    chains = {
        "ProfilingConfig": [("torchtitan/tools/profiling.py", "ProfilingConfig")],
        "MetricsProcessor.Config": [("torchtitan/components/metrics.py", "MetricsProcessor.Config")],
        "HuggingFaceTokenizer.Config": [(tok, "BaseTokenizer.Config"), (tok, "HuggingFaceTokenizer.Config")],
        "HuggingFaceTextDataLoader.Config": [(dl, "BaseDataLoader.Config"),
                                             (dl, "ParallelAwareDataloader.Config"),
                                             (text, "HuggingFaceTextDataLoader.Config")],
        "ModelConvertersContainer.Config": [("torchtitan/protocols/model_converter.py",
                                             "ModelConvertersContainer.Config")],
        "OptimizersContainer.Config": [("torchtitan/components/optimizer.py", "OptimizersContainer.Config")],
        "LRSchedulersContainer.Config": [("torchtitan/components/lr_scheduler.py",
                                          "LRSchedulersContainer.Config")],
        "TrainingConfig": [(cfg, "TrainingConfig")],
        "ParallelismConfig": [(cfg, "ParallelismConfig")],
        "CheckpointManager.Config": [("torchtitan/components/checkpoint.py", "CheckpointManager.Config")],
        "ActivationCheckpointConfig": [(cfg, "ActivationCheckpointConfig")],
        "CompileConfig": [(cfg, "CompileConfig")],
        "CommConfig": [(cfg, "CommConfig")],
        "Validator.Config": [(val, "BaseValidator.Config"), (val, "Validator.Config")],
        "DebugConfig": [(cfg, "DebugConfig")],
    }
    for name, chain in chains.items():
        f[name] = (lambda chain=chain: build(repo, chain, f))
    return f


# Trainer.Config's fields in order (torchtitan/trainer.py), each with the class its default is.
TRAINER = [("hf_assets_path", None), ("dump_folder", None), ("profiling", "ProfilingConfig"),
           ("metrics", "MetricsProcessor.Config"), ("tokenizer", "HuggingFaceTokenizer.Config"),
           ("dataloader", "HuggingFaceTextDataLoader.Config"),
           ("model_converters", "ModelConvertersContainer.Config"),
           ("optimizer", "OptimizersContainer.Config"), ("lr_scheduler", "LRSchedulersContainer.Config"),
           ("training", "TrainingConfig"), ("parallelism", "ParallelismConfig"),
           ("checkpoint", "CheckpointManager.Config"),
           ("activation_checkpoint", "ActivationCheckpointConfig"), ("compile", "CompileConfig"),
           ("comm", "CommConfig"), ("validator", "Validator.Config"), ("debug", "DebugConfig")]

# The registry functions' arguments (models/*/config_registry.py at COMMIT), section by section.
REGISTRY = {
    "llama3_8b": {
        "model_spec": {"name": "llama3", "flavor": "8B"},
        "hf_assets_path": "./assets/hf/Llama-3.1-8B",
        "profiling": {"enable_profiling": True, "profile_freq": 100},
        "metrics": {"enable_tensorboard": True},
        "optimizer": {"lr": 3e-4},
        "training": {"local_batch_size": 1, "seq_len": 8192, "steps": 1000},
        "dataloader": {"dataset": "c4"},
        "checkpoint": {"interval": 500},
        "activation_checkpoint": {"mode": "selective", "selective_ac_option": "op"},
        "validator": {"freq": 500, "steps": 1200},
    },
    "llama3_70b": {
        "model_spec": {"name": "llama3", "flavor": "70B"},
        "hf_assets_path": "./assets/hf/Llama-3.1-70B",
        "profiling": {"enable_profiling": True, "profile_freq": 100},
        "metrics": {"enable_tensorboard": True},
        "optimizer": {"lr": 1.5e-4},
        "training": {"local_batch_size": 8, "seq_len": 8192, "steps": 1000},
        "dataloader": {"dataset": "c4"},
        "parallelism": {"tensor_parallel_degree": 8},
        "checkpoint": {"interval": 500},
        "activation_checkpoint": {"mode": "full"},
        "validator": {"freq": 500, "steps": 1200},
    },
    "deepseek_v3_16b": {
        "model_spec": {"name": "deepseek_v3", "flavor": "16B"},
        "hf_assets_path": "./assets/hf/deepseek-moe-16b-base",
        "dataloader": {"dataset": "c4"},
        "optimizer": {"lr": 2.2e-4},
        "lr_scheduler": {"decay_ratio": 0.8, "decay_type": "cosine", "min_lr_factor": 0.1},
        "training": {"local_batch_size": 4, "seq_len": 4096, "steps": 1000},
        "parallelism": {"pipeline_parallel_schedule": "Interleaved1F1B",
                        "expert_parallel_degree": 8, "expert_tensor_parallel_degree": 1},
        "checkpoint": {"interval": 10},
        "activation_checkpoint": {"mode": "selective", "selective_ac_option": "op"},
        "compile": {"enable": True, "components": ["loss"]},
    },
    "qwen3_32b": {
        "model_spec": {"name": "qwen3", "flavor": "32B"},
        "hf_assets_path": "./assets/hf/Qwen3-32B",
        "dataloader": {"dataset": "c4"},
        "optimizer": {"lr": 8e-4},
        "lr_scheduler": {"warmup_steps": 600},
        "training": {"local_batch_size": 2, "seq_len": 4096, "steps": 3000},
        "checkpoint": {"interval": 500, "last_save_model_only": False, "export_dtype": "float16"},
        "activation_checkpoint": {"mode": "full", "selective_ac_option": "op"},
    },
}


def dump(repo, name):
    f = factories_for(repo)
    args = REGISTRY[name]
    top = dict(class_fields(repo, "torchtitan/trainer.py", "Trainer.Config"))
    d = {"model_spec": args["model_spec"]}
    for field_name, cls in TRAINER:
        if cls is None:
            d[field_name] = args.get(field_name, ast.literal_eval(top[field_name]))
            continue
        d[field_name] = f[cls]()
        d[field_name].update(args.get(field_name, {}))
    # What `--debug.save_config_file job_config.json` on the command line leaves in the dump.
    d["debug"]["save_config_file"] = "job_config.json"
    return json.dumps(d, indent=2)


def defaults(repo):
    """Trainer.Config() at its defaults, with the registry's text dataloader and an empty
    model_spec: the skeleton `accel export-config --to torchtitan` fills in
    (exporters/torchtitan_defaults.cc)."""
    f = factories_for(repo)
    top = dict(class_fields(repo, "torchtitan/trainer.py", "Trainer.Config"))
    d = {"model_spec": {"name": "", "flavor": ""}}
    for field_name, cls in TRAINER:
        d[field_name] = ast.literal_eval(top[field_name]) if cls is None else f[cls]()
    return json.dumps(d, indent=2)


if __name__ == "__main__":
    repo, out = sys.argv[1], sys.argv[2]
    if out == "--defaults":
        print(defaults(repo))
        sys.exit(0)
    for name in REGISTRY:
        with open(f"{out}/{name}.json", "w") as fh:
            fh.write(dump(repo, name))
