"""``manage.py train_injection_model --data PATH``: rebuild the injection classifier (SPEC P4) deterministically.

Trains on ``--data`` (JSON lines: text, label, source, kind, lang; e.g. the project's shared ``train.jsonl``,
which is on the development machine only, in ``../shared/data/injection/``: a clone has no copy, so pass your
own file) plus the project's own corpus (``--no-own-corpus`` leaves it out), calibrates the thresholds out of
source and writes ``weights.npy`` and ``manifest.json`` (checksum, parameters, what it was trained on) to ``--out``
(default: the shipped model's directory). The same data and parameters give the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory.engine.injection import classifier, training
from memory.engine.injection.features import FeatureConfig


class Command(BaseCommand):
    help = "Train the injection classifier from labelled JSON lines and write the model and its manifest."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--data", required=True, type=Path, help="training rows (JSON lines)")
        parser.add_argument("--out", type=Path, default=classifier.MODEL_DIR, help="model directory")
        parser.add_argument("--no-own-corpus", action="store_true", help="leave out the project's own corpus")
        parser.add_argument("--c", type=float, default=training.TrainConfig.c, help="inverse L2 strength")
        parser.add_argument("--hash-bits", type=int, default=FeatureConfig.hash_bits)
        parser.add_argument("--block-fp", type=float, default=training.TrainConfig.block_fp)
        parser.add_argument("--review-fp", type=float, default=training.TrainConfig.review_fp)
        parser.add_argument("--seed", type=int, default=training.TrainConfig.seed)

    def handle(self, *args: Any, **options: Any) -> None:
        if not 10 <= options["hash_bits"] <= 24:
            raise CommandError("--hash-bits must be between 10 and 24")
        if not (0 < options["block_fp"] <= options["review_fp"] < 1):
            raise CommandError("need 0 < --block-fp <= --review-fp < 1")
        config = training.TrainConfig(
            features=FeatureConfig(hash_bits=options["hash_bits"]),
            c=options["c"],
            block_fp=options["block_fp"],
            review_fp=options["review_fp"],
            seed=options["seed"],
        )
        try:
            rows = training.read_rows(options["data"])
            data = [training.file_record(options["data"], rows)]
            if not options["no_own_corpus"]:
                own = training.own_rows()
                data.append({**training.file_record(training.OWN_CORPUS, own), "split": "dev"})
                rows = rows + own
        except (training.TrainingError, OSError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"training on {len(rows)} rows ({sum(r.label for r in rows)} attacks) ...")
        trained = training.train(rows, config, data)
        training.write(trained, options["out"])
        classifier.reset()
        t = trained.manifest["thresholds"]
        self.stdout.write(
            self.style.SUCCESS(
                f"wrote {options['out']}: weights sha256 {trained.manifest['weights_sha256'][:12]}, "
                f"block >= {t['block']:.4f}, review >= {t['review']:.4f}"
            )
        )
