"""The branch ledger (docs/callgraph.md §7, docs/ir.md §9): per method, every branch with the effects it governs and its guards."""
