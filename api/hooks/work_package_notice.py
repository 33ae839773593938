"""The work-package notice SessionStart appends at briefing level `full` (the agent guide,
step 4): when a digest package or a transcript package is available, a few lines telling the
host agent it may offer to dispatch `work_package` in this session. It is an instruction to
the agent, not memory, so it sits outside the briefing's fence; `briefing` never includes it.
At any other level, or with nothing available, there is no notice."""

from __future__ import annotations

from pathlib import Path

from dream.work_package.sources import digest_select, has_transcripts

HEADING = "memesh work package"


def work_package_notice(project: str | None, cwd: str | None) -> str:
    """The notice for a session of `project` started in `cwd` ("" when nothing is available)."""
    kinds: list[str] = []
    # Without a reported working directory there is no project, and none is guessed.
    digest = digest_select(project) if project is not None else None
    if digest is not None:
        kinds.append(
            f"a digest of {len(digest.entities)} episodic memories of week {digest.week} "
            '(`work_package` {"action": "prepare", "kind": "digest"})'
        )
    if cwd is not None and has_transcripts(Path(cwd)):
        kinds.append(
            "the newest agent session of this workspace "
            '(`work_package` {"action": "prepare", "kind": "transcript"}; needs the MCP '
            "client's workspace root)"
        )
    if not kinds:
        return ""
    return (
        f"[{HEADING}] Available to condense: {'; and '.join(kinds)}.\n"
        "When the host supports interactive prompts, offer the user, in their language, the "
        "choices Dispatch agent task, Later, or Don't suggest again this session (the last "
        "suppresses only this session's prompt). Dispatch means you call `work_package` "
        "prepare in this session, then submit one bounded result for human review or defer "
        "without writing; you cannot apply or reject it."
    )
