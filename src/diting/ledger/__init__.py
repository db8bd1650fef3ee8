"""The branch ledger (SPEC §3.4): per method, every branch with the effects it governs and its guards."""
