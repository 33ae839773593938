"""why, the graph half of `memesh why` (POST /v1/why): join commit hashes the caller resolved
to the commit entities the hooks captured, each entity's session (metadata.session_id) to
that session's memories, and collect the memories tagged with the file (`file:<basename>`).

It runs no git, ever: commits come from the caller, and the schema has no repository path, so
the server is never handed a directory to execute anything in. Every gap is a typed
abstention, never a guess:
- per commit: `no_commit_entity` (no memory of that hash), `no_session_link` (the commit
  entity has no session id);
- top level: `no_commits_supplied` (the request carried no `commits` at all — `[]` means the
  caller looked and found none, which is not the same question).
A commit entity is one of type `commit` whose `metadata.hash` starts with the given hash, or
whose name is `commit-<first 7 characters>`; a session's memories are those whose
`metadata.session_id` is the commit's, at most SESSION_CAP, with `truncated` when capped.
The file-tag half is labelled `basis: "file-tag"`: associated by name, not derived from the
commits, and it must not be read as the same kind of evidence.
"""

from __future__ import annotations

import posixpath
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from graph.models import Entity, Status
from graph.ops.kit.entity_view import EntityOutput, entity_outputs
from graph.ops.kit.fields import Output, StrictInput
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation
from graph.project_tags import project_tag

SESSION_CAP = 200
FILE_MEMORY_CAP = 50
CommitHash = Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{7,40}$")]


class WhyInput(StrictInput):
    file: str = Field(min_length=1, max_length=4096, description="The file, e.g. `src/auth.ts`.")
    commits: list[CommitHash] | None = Field(
        default=None,
        max_length=50,
        description="Commit hashes (7-40 hex) that touched the file, resolved by the caller "
        "(`git log --follow`); omit when unknown, `[]` when there are none.",
    )
    project: str | None = Field(
        default=None, max_length=255, description="Scope the file-tag half to this project."
    )
    limit: int = Field(default=10, ge=1, le=50, description="Commits inspected, 1-50.")


class CommitRef(Output):
    hash: str


class SessionOutput(Output):
    session_id: str
    entities: list[EntityOutput]
    truncated: bool


class CommitOutput(Output):
    commit: CommitRef
    entity: EntityOutput | None
    session: SessionOutput | None
    abstentions: list[str]


class FileMemories(Output):
    basis: Literal["file-tag"] = "file-tag"
    entities: list[EntityOutput]


class WhyOutput(Output):
    file: str
    basename: str
    project: str | None
    commits: list[CommitOutput]
    file_memories: FileMemories
    abstentions: list[str]


def _commit_entity(commit: str) -> Entity | None:
    commit = commit.lower()
    by_hash = (
        Entity.objects.filter(
            type="commit", status=Status.ACTIVE, metadata__hash__startswith=commit
        )
        .order_by("-id")
        .first()
    )
    if by_hash is not None:
        return by_hash
    return Entity.objects.filter(
        type="commit", status=Status.ACTIVE, name=f"commit-{commit[:7]}"
    ).first()


def _one(entity_id: int) -> EntityOutput:
    return entity_outputs(Entity.objects.documents([entity_id]))[0]


def _session(session_id: str) -> SessionOutput:
    ids = list(
        Entity.objects.filter(status=Status.ACTIVE, metadata__session_id=session_id)
        .order_by("id")
        .values_list("id", flat=True)[: SESSION_CAP + 1]
    )
    return SessionOutput(
        session_id=session_id,
        entities=entity_outputs(Entity.objects.documents(ids[:SESSION_CAP])),
        truncated=len(ids) > SESSION_CAP,
    )


def why(*, data: WhyInput) -> WhyOutput:
    basename = posixpath.basename(data.file.replace("\\", "/")) or data.file
    commits: list[CommitOutput] = []
    for commit in (data.commits or [])[: data.limit]:
        entity = _commit_entity(commit)
        if entity is None:
            commits.append(
                CommitOutput(
                    commit=CommitRef(hash=commit),
                    entity=None,
                    session=None,
                    abstentions=["no_commit_entity"],
                )
            )
            continue
        session_id: Any = (entity.metadata or {}).get("session_id")
        has_session = isinstance(session_id, str) and bool(session_id)
        commits.append(
            CommitOutput(
                commit=CommitRef(hash=commit),
                entity=_one(entity.pk),
                session=_session(session_id) if has_session else None,
                abstentions=[] if has_session else ["no_session_link"],
            )
        )
    tagged = Entity.objects.filter(status=Status.ACTIVE, tags__name=f"file:{basename}")
    if data.project is not None:
        tagged = tagged.filter(tags__name=project_tag(data.project))
    ids = list(tagged.order_by("-updated_at", "-id").values_list("id", flat=True)[:FILE_MEMORY_CAP])
    return WhyOutput(
        file=data.file,
        basename=basename,
        project=data.project,
        commits=commits,
        file_memories=FileMemories(entities=entity_outputs(Entity.objects.documents(ids))),
        abstentions=["no_commits_supplied"] if data.commits is None else [],
    )


def _why(data: WhyInput, ctx: CallContext) -> WhyOutput:
    return why(data=data)


WHY = Operation(
    name="why",
    summary=(
        "What memesh remembers about the commits that touched a file (commit hashes resolved "
        "by the caller), their sessions, and the memories tagged with the file's name."
    ),
    input_model=WhyInput,
    output_model=WhyOutput,
    handler=_why,
    hints=READ_ONLY,
    # The graph half of a CLI command and a REST route; the reference lists no such tool.
    tool=False,
    examples=[
        {"file": "src/auth.ts", "commits": ["abc1234"], "limit": 10},
        {"file": "src/auth.ts"},
    ],
)
