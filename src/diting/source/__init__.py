"""source stage."""
