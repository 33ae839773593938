"""What memesh remembers about a file, shown to an agent about to edit it (PreToolUse
Edit|Write): at most MAX_LINES memory lines, fenced as the briefing fences memory.

Two sources, in order:
1. memories tagged `file:<basename>` (newest first);
2. close keyword hits for the path: memories whose keyword index holds the basename's words
   and whose text names the file itself (`auth_service.py`, or its path), so a memory that
   merely shares a word with it is not one about it. Keyword only: no query embedding.
Only active, trusted memories (no imports: graph/ops/briefing/ `is_trusted`) of this
project or of no project; routine activity (commits, session records) is left to `memesh
why`, which is where a file's history is asked for. Nothing here counts as a recall: no
access is recorded, no session outcome.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from django.db.models import Q, QuerySet
from django.utils import timezone

from graph.models import Entity, Status
from graph.ops.briefing import ACTIVITY_TYPES, HANDOFF, is_trusted
from graph.ops.briefing.render import clean, memory_line, wrap
from graph.project_tags import PROJECT_TAG_PREFIX, project_tag
from graph.search import text
from graph.storage.documents import EntityDocument

MAX_LINES = 5
KEYWORD_POOL = 20
MIN_STEM_CHARS = 3


@dataclass(frozen=True)
class FileContext:
    text: str  # the fenced block; "" when nothing is remembered about the file
    entity_ids: list[int]


def in_scope(queryset: QuerySet[Entity], project: str | None) -> QuerySet[Entity]:
    """Active memories of `project` or of no project (of no project only, without one)."""
    scope = Q(pk__in=Entity.objects.exclude(tags__name__startswith=PROJECT_TAG_PREFIX).values("pk"))
    if project is not None:
        scope |= Q(pk__in=Entity.objects.filter(tags__name=project_tag(project)).values("pk"))
    return queryset.filter(status=Status.ACTIVE).filter(scope)


def _durable(queryset: QuerySet[Entity]) -> QuerySet[Entity]:
    return queryset.exclude(type__in=[HANDOFF, *ACTIVITY_TYPES])


def _names_file(doc: EntityDocument, basename: str, path: str) -> bool:
    wanted = [basename.lower(), path.lower()]
    haystacks = [doc.name, doc.title or "", *doc.observations]
    return any(w in h.lower() for h in haystacks for w in wanted if w)


def file_context(*, project: str | None, path: str, relative: str | None = None) -> FileContext:
    """The fenced block of what is remembered about `path` (`relative`: the path from the
    repository's top, when known)."""
    basename = posixpath.basename(path.replace("\\", "/"))
    if not basename:
        return FileContext("", [])
    tagged = in_scope(_durable(Entity.objects.filter(tags__name=f"file:{basename}")), project)
    ids = list(tagged.order_by("-updated_at", "-id").values_list("id", flat=True)[:KEYWORD_POOL])
    stem = basename.rsplit(".", 1)[0] if "." in basename[1:] else basename
    terms = text.query_terms(stem) if len(stem) >= MIN_STEM_CHARS else []
    if terms and len(ids) < MAX_LINES:
        hits = Entity.objects.fts_candidates(
            text.match_expression(terms), limit=KEYWORD_POOL, now=timezone.now()
        )
        allowed = set(
            in_scope(
                _durable(Entity.objects.filter(pk__in=[h.entity_id for h in hits])), project
            ).values_list("id", flat=True)
        )
        ids += [h.entity_id for h in hits if h.entity_id in allowed and h.entity_id not in ids]
    docs = {d.id: d for d in Entity.objects.documents(ids)}
    lines: list[str] = []
    shown: list[int] = []
    for entity_id in ids:
        doc = docs.get(entity_id)
        if doc is None or not is_trusted(doc.metadata):
            continue
        by_tag = f"file:{basename}" in doc.tags
        if not by_tag and not _names_file(doc, basename, relative or path):
            continue
        label = clean(doc.title or next((o for o in doc.observations if o.strip()), doc.name))
        lines.append(memory_line(doc.type, label, doc.id))
        shown.append(doc.id)
        if len(lines) == MAX_LINES:
            break
    if not lines:
        return FileContext("", [])
    head = [f"Memories about {clean(relative or basename, 200)} (verify before relying on them)"]
    return FileContext(wrap([*head, *lines]), shown)
