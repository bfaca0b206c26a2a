"""The model: the design a user writes, the parts catalog, and the compiled plan every stage refines."""
