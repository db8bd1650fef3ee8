"""resolve: what names, receivers, expressions and injection points refer to (SPEC §4.3–§4.5, §4.9)."""
