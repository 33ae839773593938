"""The trust model (docs/trust.md): provenance and trust of every memory, and the rules that
keep confidence from being laundered.

- A memory with a `source` is a **fact**, one without is a **hypothesis** (the entity's
  `status`, active | archived, is a separate thing). `confidence` is an input, by default
  FACT_CONFIDENCE for a fact and HYPOTHESIS_CONFIDENCE for a hypothesis.
- A memory derived from others without a source of its own (a remember with `parent_id`, a
  supersede without `source`, an accepted dream digest or pattern) is a hypothesis, no more
  confident than the least confident of them, holding the union of their invalidation tags
  and conditions, one hop further from an observation, and never observed itself.
- Only `observe` raises trust: it re-stamps `last_observed_at`, raises confidence, and is the
  one path from hypothesis to fact, which needs a source. remember on an existing memory,
  import and accepting a proposal may add doubt (a lower confidence, a condition, a tag) but
  are refused (`trust.observe-required`) or ignored where they would raise it.
- `ttl_hours` sets `expires_at`: an expired memory is hidden from recall, briefing, export and
  memory_list unless a call asks for `include_expired`.

fields.py holds the input types and their descriptions, view.py the `trust` block every read
shows (and the "unconfirmed since" wording), rules.py what a write sets; the services call
them and own their writes.
"""
