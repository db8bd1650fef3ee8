"""Diff of two IR packages of one service (SPEC §8), by ``stable_id``, never by record_id."""
