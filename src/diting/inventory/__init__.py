"""inventory stage."""
