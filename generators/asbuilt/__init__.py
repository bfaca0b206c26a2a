"""As-built checks: what was discovered on site against the plan."""
