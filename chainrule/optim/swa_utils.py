"""Stochastic weight averaging (filled in below)."""
