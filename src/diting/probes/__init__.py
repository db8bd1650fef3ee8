"""probes: rule-driven recognition of entries, contracts, topics, config keys and cache keys (docs/middleware.md, docs/rules.md)."""
