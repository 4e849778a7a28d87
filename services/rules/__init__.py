"""The rules service: legality of every action, legal options per seat, wins and waits, 敲 and
漏胡 (RULES.md §4-§7). ``domain/`` holds the rules (pure Python, API documented in its
``__init__``), ``servicer.py`` translates protobuf, ``server.py`` is ``mahjong serve rules``,
``cli.py`` adds ``mahjong judge``."""
