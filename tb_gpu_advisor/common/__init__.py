"""Leaf helpers every layer may use: settings from the environment, the error type of unreadable
profiles, units, and work on threads. They import nothing else of the package."""
