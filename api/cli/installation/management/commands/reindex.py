"""`memesh reindex`: rebuild the vector index by generations (graph/indexing/reindex.py), or
--fts."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import CommandParser
from tqdm import tqdm

from api.cli.base import MemeshCommand
from core.errors import InvalidParameter, MemeshError
from graph.indexing import reindex
from graph.models import Entity


class RetiredFlag(MemeshError):
    error_code = "reindex.retired-flag"
    http_status = 400


class Command(MemeshCommand):
    help = "Regenerate vector embeddings for all entities (a new index generation, swapped in "
    "when complete), or rebuild the keyword index with --fts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--namespace", help="Reindex only this namespace, in place.")
        parser.add_argument(
            "--fts", action="store_true", help="Rebuild the full-text keyword index instead."
        )
        parser.add_argument(
            "--discard-generation",
            action="store_true",
            help="Throw away a half-built index without rebuilding; never touches the live one.",
        )
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")
        # Retired: it granted consent to drop every embedding before the refill, a step
        # generations removed. Rejected, never accepted as a no-op.
        parser.add_argument("--vectors", action="store_true", help="Retired; rejected.")

    def handle(self, *args: Any, **options: Any) -> None:
        as_json = options["json"]
        if options["vectors"]:
            raise RetiredFlag(
                "--vectors was retired: a full reindex builds a new generation beside the live "
                "index, so nothing needs consent to be dropped. Run `memesh reindex`."
            )
        if sum(bool(options[k]) for k in ("fts", "discard_generation", "namespace")) > 1:
            raise InvalidParameter("--fts, --discard-generation and --namespace cannot be combined")
        if options["fts"]:
            count = Entity.objects.index_rebuild()
            self._out(
                as_json,
                {"fts": True, "entities": count},
                f"Keyword index rebuilt: {count} entities.",
            )
            return
        if options["discard_generation"]:
            info = reindex.discard_generation()
            text = (
                f"Discarded half-built generation(s) {info.generations} ({info.rows} vectors)."
                if info.discarded
                else "Nothing to discard."
            )
            self._out(as_json, info.as_json(), text)
            return
        with self._progress(as_json) as bar:
            update = bar.update if bar is not None else None
            if options["namespace"]:
                result = reindex.reindex_namespace(options["namespace"], progress=update)
            else:
                result = reindex.reindex_all(progress=update)
        data = result.as_json()
        if as_json:
            self.stdout.write(json.dumps(data, indent=2))
        else:
            self.stdout.write(self._summary(result))
        if not result.complete:
            raise SystemExit(1)

    def _progress(self, as_json: bool) -> Any:
        enabled = sys.stderr.isatty() and not as_json

        class _Bar:
            def __enter__(self_inner) -> Any:
                self_inner.bar = (
                    tqdm(unit="memory", desc="Embedding", file=sys.stderr) if enabled else None
                )
                return self_inner.bar

            def __exit__(self_inner, *exc: object) -> None:
                if self_inner.bar is not None:
                    self_inner.bar.close()

        return _Bar()

    def _summary(self, r: reindex.ReindexResult) -> str:
        head = "✅ Reindex complete" if r.complete else "⚠️ Reindex incomplete"
        lines = [
            f"{head} ({r.scope}; generation {r.generation}, {r.provider}/{r.model}, "
            f"{r.dimensions}-d)",
            f"  memories: {r.total}  embedded: {r.embedded}  already_staged: {r.already_staged}",
        ]
        if r.discarded:
            lines.append(f"  discarded a half-built generation of {r.discarded['identity']}")
        if r.swapped:
            lines.append(f"  swapped in; carried across: {r.carried}  pruned: {r.pruned}")
        if not r.complete:
            if r.failed:
                lines.append(f"  Could not be regenerated: {r.failed}")
            if r.missing:
                lines.append(f"  Still without a current vector: {r.missing}")
            if r.aborted_after:
                lines.append(
                    f"  Stopped after {r.aborted_after} consecutive provider failures; "
                    "run memesh reindex again to continue"
                )
            lines.extend(f"  error: {e}" for e in r.errors[:3])
        if r.reindex_needed and r.complete:
            lines.append("  Other namespaces still wait for vectors (memesh doctor).")
        return "\n".join(lines)

    def _out(self, as_json: bool, data: dict[str, Any], text: str) -> None:
        self.stdout.write(json.dumps(data, indent=2) if as_json else text)
