"""Diff of two IR packages of one service (docs/diff.md), by ``stable_id``, never by record_id."""
