"""Share links: read-only access to one snapshot without an account, and their audit log."""
