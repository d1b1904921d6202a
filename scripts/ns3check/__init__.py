"""The ns-3 cross-checks, one tool: ``scripts/crosscheck_ns3.py dumbbell {tcp,codel,dumbbell}`` (see
docs/crosscheck-ns3.md). ``common`` is what they share; each other module is one cross-check."""
