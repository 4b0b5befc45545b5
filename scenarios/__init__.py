"""Scenarios: the TOML files, their schema and loader, the named library, fault strategies.

May import ``model`` (and pydantic, hypothesis). Never simpy or sim.
"""
