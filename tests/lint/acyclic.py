"""An import-linter contract type, ``acyclic``: no import cycle among the given packages'
modules at run time (imports under ``if TYPE_CHECKING:`` excluded when the session sets
``exclude_type_checking_imports``). A package counts as a module: its ``__init__`` importing a
child that imports the package back is a cycle too, as it is for Python at import time.

Configured in pyproject.toml under ``[tool.importlinter]`` and run by ``make lint``."""

from __future__ import annotations

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def strongly_connected(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """The import graph's cycles among ``modules``: each strongly connected component of more
    than one module, sorted (Tarjan's algorithm, iterative)."""
    edges = {
        m: sorted(n for n in graph.find_modules_directly_imported_by(m) if n in modules)
        for m in modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(found)


class AcyclicContract(Contract):
    """Options: ``packages``, the packages whose modules must import one another without a
    cycle."""

    type_name = "acyclic"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        modules: set[str] = set()
        for package in self.packages:  # type: ignore[attr-defined]
            modules.add(package)
            modules |= graph.find_descendants(package)
        cycles = strongly_connected(graph, modules)
        links = {
            tuple(cycle): [
                (m, n, [d["line_number"] for d in graph.get_import_details(importer=m, imported=n)])
                for m in cycle
                for n in sorted(graph.find_modules_directly_imported_by(m))
                if n in cycle
            ]
            for cycle in cycles
        }
        return ContractCheck(kept=not cycles, metadata={"cycles": links})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for cycle, links in check.metadata["cycles"].items():
            output.print_error(f"A cycle of {len(cycle)} modules:", bold=True)
            for importer, imported, lines in links:
                where = ", ".join(f"l.{n}" for n in lines)
                output.print_error(f"  {importer} -> {imported} ({where})", bold=False)
            output.new_line()
