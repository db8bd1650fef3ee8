"""resolve: what names, receivers, expressions and injection points refer to (docs/scanning.md §9, §12, §13; docs/callgraph.md)."""
