"""Which entity types belong together: the groups the relation backfill, the graph view and
the dashboard's analytics read the graph by (the reference's `src/core/work-topology.ts` and
`src/core/analytics.ts` lists). Types are free-form labels; a type in none of these groups is
ordinary knowledge (a note, a bug fix, an architecture record).
"""

from __future__ import annotations

LESSON_TYPES = ("lesson_learned", "lesson", "mistake")

# The work layer: what was decided, learned or planned (GET /v1/graph?layer=work).
WORK_TYPES = frozenset({
    *LESSON_TYPES, "decision", "milestone", "pattern", "technical_pattern", "goal", "plan",
    "task-state",
})  # fmt: skip

# The evidence layer: captures that show work happened (commits, session records); the
# sources of the `evidences` edges `memesh kg backfill-relations` draws.
EVIDENCE_TYPES = frozenset({
    "commit", "session-insight", "session-summary", "session_keypoint", "session-identity",
    "session_identity", "weekly-summary", "weekly_summary", "workflow_checkpoint",
})  # fmt: skip

# Noise: the high-volume automatic captures the graph view caps (GET /v1/graph: every other
# entity, plus the 200 most recent of these) and the age matrix leaves out. The reference's
# list, which is the evidence layer without `weekly_summary` (a spelling the reference's
# capture never wrote) and `workflow_checkpoint` (the dashboard counts it as process
# knowledge, on the radar's `processes` axis).
NOISE_TYPES = frozenset({
    "session_keypoint", "commit", "weekly-summary", "session-insight", "session-summary",
    "session_identity", "session-identity",
})  # fmt: skip

# The relation a piece of evidence points at the work item it supports with.
EVIDENCES = "evidences"
