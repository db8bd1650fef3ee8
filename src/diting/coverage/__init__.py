"""coverage stage."""
