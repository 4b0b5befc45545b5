"""Search: swarm, Hypothesis and exhaustive explorers behind one interface, shrinking, counterexamples."""
