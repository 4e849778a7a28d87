"""Adapters of the engine's ports: in-process (domain calls) and remote (gRPC with deadlines)."""
