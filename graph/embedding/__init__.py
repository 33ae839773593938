"""Embedding providers behind one interface (base.py), chosen by configuration (config.py)."""
