"""Pure analysis and rendering of histories and sweep results (never simpy, never sim)."""
