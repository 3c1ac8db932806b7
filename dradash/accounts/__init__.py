"""Accounts: who may log in and how — login throttling, API tokens, the client's address."""
