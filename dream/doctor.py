"""`memesh doctor` (CLI and GET /v1/doctor alike): graph's checks (graph/doctor.py), then the
dream side's — today the state of scheduled transcript mining. Both transports call
`run_checks` here, so they report the same list."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from core.redact import redact
from core.transcripts import claude_projects_dir
from dream.mining import state as mining_state
from dream.mining.service import mining_switch
from dream.passes import llm_configured
from graph import doctor as graph_doctor
from graph.doctor import Check

TRANSCRIPT_MINING = "Scheduled transcript mining"
HOW_TO_SCHEDULE = "`memesh dream run --from-transcripts --if-due` from cron (docs/dream.md)"


def run_checks(*, probe: bool = True) -> list[Check]:
    return [*graph_doctor.run_checks(probe=probe), transcript_mining_check()]


def _ago(when: datetime) -> str:
    hours = (timezone.now() - when).total_seconds() / 3600
    return f"{hours:.1f} h ago" if hours < 48 else f"{hours / 24:.0f} days ago"


def transcript_mining_check() -> Check:
    switch = mining_switch()
    folder = claude_projects_dir()
    last = mining_state.last_mined()
    data = {
        "enabled": switch.enabled,
        "source": switch.source,
        "llmConfigured": llm_configured(),
        "transcriptsDir": redact(str(folder)),
        "transcriptsDirExists": folder.is_dir(),
        "lastMined": {project: when.isoformat() for project, when in sorted(last.items())},
    }
    origin = {
        "env": f"MEMESH_TRANSCRIPT_MINING={int(switch.enabled)}",
        "config": f"transcriptMining {'true' if switch.enabled else 'false'}",
    }.get(switch.source, "transcriptMining is unset")
    if not switch.enabled:
        return Check(
            TRANSCRIPT_MINING,
            "ok",
            f"off ({origin}): a scheduled --if-due run does nothing. To turn it on: "
            "`memesh config set transcriptMining true` (or MEMESH_TRANSCRIPT_MINING=1), then "
            f"run {HOW_TO_SCHEDULE}",
            data,
        )
    if not data["llmConfigured"]:
        return Check(
            TRANSCRIPT_MINING,
            "warn",
            f"on ({origin}), but no LLM is configured: every scheduled run fails with "
            "llm.not-configured (`memesh config set llm …`)",
            data,
        )
    mined = ", ".join(f"{p or '(no project)'} {_ago(w)}" for p, w in sorted(last.items()))
    if not folder.is_dir():
        return Check(
            TRANSCRIPT_MINING,
            "warn",
            f"on ({origin}), but there are no Claude Code transcripts at "
            f"{redact(str(folder))} (CLAUDE_CONFIG_DIR)",
            data,
        )
    return Check(
        TRANSCRIPT_MINING,
        "ok",
        f"on ({origin}); last mined: {mined or 'never'}. Scheduled by {HOW_TO_SCHEDULE}",
        data,
    )
