"""probes: rule-driven recognition of entries, contracts, topics, config keys and cache keys (SPEC §4.6, §5)."""
