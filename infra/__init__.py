"""The platform every service runs on: the server bootstrap (both server models), the web
port, TLS, the store, ports and addresses, the supervisor. It imports the mahjong kernel
(:mod:`shared`) and never a service."""
