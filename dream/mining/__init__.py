"""Transcript mining: proposals drawn from the agents' own session files. `service.py` is the
pass, `duplicates.py` the vector-index check against what memory already holds, `state.py`
what was read (transcript-mining.json)."""
