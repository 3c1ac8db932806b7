"""The pure core: Kubernetes DRA logic on plain dicts, with no Django imports."""
