"""java stage."""
