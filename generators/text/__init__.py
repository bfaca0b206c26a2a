"""Text formats railyard writes, with no knowledge of designs or plans: JSON with json.dumps's exact
bytes (jsontext), block YAML (yamltext), CSV (csvtext) and the one Jinja2 environment (templating)."""
