"""pyramid stage: L2 entry cards, L3 service profiles and L4 flows derived from the graph (docs/pyramid.md)."""
