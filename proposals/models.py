"""Dream proposals (digests, patterns, relation verdicts) and their review lifecycle."""
