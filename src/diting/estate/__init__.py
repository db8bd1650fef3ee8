"""Estates: many repositories scanned together and a graph kept current with them (docs/estates.md)."""
