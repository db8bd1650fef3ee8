"""config stage."""
