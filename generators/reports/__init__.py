"""Reports read from compiled plans: the compile summary, site facts, `railyard diff` and `railyard compare`."""
