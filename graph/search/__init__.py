"""Pure Python search parts: the tokenizer, fusion and scoring (no Django imports)."""
