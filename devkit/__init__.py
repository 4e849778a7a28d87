"""Development-only tools: the development issuer and the local stack that `make run` starts. Never imported by a service's production path."""
