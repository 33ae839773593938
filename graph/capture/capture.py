"""The write service of the capture paths: what the hooks store without a person choosing it.

The hooks (api/hooks/, whichever host runs them) record commits, session evidence, the
project's handoff, note files, "remember this" prompts and pre-compaction summaries, each
stamped with the host's `source_host` (core/hook_hosts.py). They all write through
`entity_capture`, which is remember's service (graph/ops/remember: validation, dedupe, the
keyword index in the same transaction) plus what remember does not take: metadata
(`session_id`, a commit's hash, a note file's path) and a bounded `replaced_history` for
memories rewritten on every turn (a handoff, a session's evidence).

Trust (docs/trust.md): a capture without a `source` is a hypothesis, as any unsourced remember;
one given a `source` (a commit: `git:<hash>`, where it can be checked) is created a fact. The
source is given to a new memory only: on one already stored, changing its trust is `observe`'s.

Two rules every capture path shares live here:
- `auto_capture_enabled`: MEMESH_AUTO_CAPTURE (true/false) when set, else the `autoCapture`
  key of config.json (`memesh config set autoCapture false`; this module owns how it is read,
  graph/config_sections.py declares the section), else on. An unreadable config.json counts as off:
  the user may have turned capture off in the file that can no longer be read.
- `first_secret`: a candidate carrying a secret (core/redact.py, the one detector)
  is dropped, never stored; the caller reports the detector's name, never the secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from core import config_sections, config_store
from core.hook_hosts import DEFAULT_HOOK_HOST, hook_source_host
from core.redact import find_secret
from graph.capture.clipping import clip
from graph.config_sections import AUTO_CAPTURE_SETTING
from graph.models import Entity, Tag
from graph.ops.kit.fields import MAX_OBSERVATION_CHARS, MAX_OBSERVATIONS, MAX_TAGS, MAX_TITLE
from graph.ops.kit.writes import index_after_write
from graph.ops.remember.schema import RememberInput
from graph.ops.remember.service import entity_remember
from graph.project_tags import MAX_TAG_CHARS

# metadata.provenance.source_host of captures: the hook's host's (core/hook_hosts.py), Claude
# Code's unless a caller names another.
CAPTURE_SOURCE_HOST = hook_source_host(DEFAULT_HOOK_HOST)
AUTO_CAPTURE_TAG = "source:auto-capture"


def auto_capture_enabled() -> bool:
    """Whether the hooks may write (the module docstring has the rule)."""
    forced = settings.MEMESH_AUTO_CAPTURE
    if forced is not None:
        return bool(forced)
    try:
        stored = config_sections.setting(AUTO_CAPTURE_SETTING)
    except config_store.ConfigUnreadable:
        return False
    return stored is not False


def first_secret(*texts: str | None) -> str | None:
    """The name of the detector that finds a secret in any of `texts`; None when clean."""
    for text in texts:
        if text:
            found = find_secret(text)
            if found is not None:
                return found.detector
    return None


@dataclass(frozen=True, slots=True)
class Captured:
    entity_id: int
    name: str
    created: bool
    observations: int  # new observations this capture stored


@transaction.atomic
def entity_capture(
    *,
    name: str,
    type: str,
    observations: Sequence[str],
    tags: Iterable[str] = (),
    title: str | None = None,
    metadata: dict[str, Any] | None = None,
    replace: bool = False,
    keep_history: int | None = None,
    source: str | None = None,
    source_host: str = CAPTURE_SOURCE_HOST,
) -> Captured:
    """Store (or append to, or with `replace` rewrite) one captured memory, in one
    transaction: remember's write, then `metadata` merged into the entity's (keys already
    there are kept unless `metadata` names them) and, with `keep_history`, its
    `replaced_history` cut to that many newest versions. A memory it creates is stamped
    `source_host` (the hook's host: core/hook_hosts.py).

    Inputs are fitted to remember's limits rather than refused: a capture has no caller to
    shorten them. Secrets are the caller's to check (`first_secret`) before calling.
    """
    fitted_obs = [clip(o, MAX_OBSERVATION_CHARS) for o in observations if o and o.strip()]
    fitted_tags = [t for t in dict.fromkeys(tags) if t.strip() and len(t) <= MAX_TAG_CHARS]
    fields: dict[str, Any] = {
        "name": name,
        "type": type,
        "title": clip(title, MAX_TITLE) if title and title.strip() else None,
        "observations": fitted_obs[:MAX_OBSERVATIONS],
        "replace": replace and bool(fitted_obs),
    }
    if fitted_tags:  # only when given: on a replace, passing tags rewrites them
        fields["tags"] = fitted_tags[:MAX_TAGS]
    if source is not None and Entity.objects.id_for_name(name) is None:
        fields["source"] = source
    stored = entity_remember(data=RememberInput.model_validate(fields), source_host=source_host)
    if metadata or keep_history is not None:
        entity = Entity.objects.get(pk=stored.entityId)
        merged = {**entity.metadata, **(metadata or {})}
        history = merged.get("replaced_history")
        if keep_history is not None and isinstance(history, list):
            if keep_history <= 0:
                merged.pop("replaced_history", None)
            else:
                merged["replaced_history"] = history[-keep_history:]
        if merged != entity.metadata:
            entity.metadata = merged
            entity.save(update_fields=["metadata"])
    return Captured(
        entity_id=stored.entityId,
        name=stored.name,
        created=stored.created,
        observations=stored.observations,
    )


@transaction.atomic
def tags_remove(entity_id: int, names: Iterable[str]) -> int:
    """Remove these tags from a captured memory (a note file that came back loses its
    `missing` tag); the keyword index, which holds tags, follows. The number removed."""
    removed, _ = Tag.objects.filter(entity_id=entity_id, name__in=list(names)).delete()
    if removed:
        index_after_write([entity_id])
    return removed
