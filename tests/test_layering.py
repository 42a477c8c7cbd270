"""The import graph of genebench, model_adapters and dataset_builders: no circles, the rooms' arrows one way, and
the size budgets (pipeline.py's lines, every function's lines).

Every import counts, lazy ones inside functions too, and for circles those under `if TYPE_CHECKING:` too (a typing
import is still a dependency of the design); layers and rooms leave those out. A module's layer is one above the
highest module it imports. The rooms are ordered core (`genebench`) < adapters and builders (`model_adapters`,
`dataset_builders`) < the command line (`genebench.cli`); an import from a lower room into a higher one runs back
up. Run as a script, it prints the layers, every such import and every function over the budget.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import get_args

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("genebench", "model_adapters", "dataset_builders")
MAX_BACK_UP = 1
PIPELINE_LINES = 350
"""The most lines `genebench/pipeline.py` may have."""
FUNCTION_LINES = 80
"""The most lines a function of the packages may have (its `def` to its last line, docstring included)."""
TYPE_BRANCHES = 5
"""The most branches on task type or label shape (`type_branches`) outside the type table."""
TYPE_TABLE = "genebench.tasks.types"
OVER_BUDGET: dict[str, int] = {}
"""Functions still over `FUNCTION_LINES`, with their length when listed: each may only shrink, and leaves the list
when it fits (a listed function that fits, or grew, fails the test)."""


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the three packages."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING" or (
        isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")


def imports(name: str, path: Path, known: dict[str, Path], *, typing: bool = False) -> set[str]:
    """The package modules `name` imports, wherever in the file (a `from X import Y` of a submodule counts as Y);
    those under `if TYPE_CHECKING:` only with `typing`."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not typing:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1], *filter(None, [base])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {_owner(module, known) for module in found if _owner(module, known)} - {name}


def _owner(module: str, known: dict[str, Path]) -> str | None:
    """The package module `module` names (itself, or the nearest package above it), None outside the packages."""
    while module and module not in known:
        module = module.rpartition(".")[0]
    return module or None


def graph(*, typing: bool = False) -> dict[str, set[str]]:
    """Module -> the package modules it imports (typing imports too with `typing`)."""
    known = modules()
    return {name: imports(name, path, known, typing=typing) for name, path in known.items()}


def long_functions() -> dict[str, int]:
    """`module.function` (methods as `module.Class.method`) -> its lines, for every function over `FUNCTION_LINES`."""
    found = {}
    for name, path in modules().items():
        def visit(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if (lines := child.end_lineno - child.lineno + 1) > FUNCTION_LINES:
                        found[f"{prefix}.{child.name}"] = lines
                    visit(child, f"{prefix}.{child.name}")
                elif isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}.{child.name}")
                else:
                    visit(child, prefix)

        visit(ast.parse(path.read_text(encoding="utf-8")), name)
    return found


def _type_words() -> frozenset[str]:
    """Task types and label shapes (the type table's keys and its targets): the words a type switch compares."""
    from genebench.tasks.types import TASK_TYPE_TABLE, Target

    return frozenset([*TASK_TYPE_TABLE, *get_args(Target)])


def _names_type(node: ast.AST, words: frozenset[str]) -> bool:
    """`node` is a type word, or a tuple, list or set of them."""
    if isinstance(node, ast.Constant):
        return node.value in words
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(_names_type(item, words) for item in node.elts)


def _is_label_shape(node: ast.AST) -> bool:
    """`node` is `<labels>.ndim`: the number of dimensions of something named for labels."""
    return isinstance(node, ast.Attribute) and node.attr == "ndim" and "label" in ast.unparse(node.value).lower()


def type_branches() -> list[str]:
    """Every branch on task type or label shape outside the type table, as `file:line: code`: a comparison with a
    task type or target name (`== "multilabel"`, `in ("binary", ...)`), a `case` on one, or a comparison of a
    label array's `ndim`."""
    words, found = _type_words(), []
    for name, path in modules().items():
        if name == TYPE_TABLE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                hit = any(_names_type(side, words) or _is_label_shape(side) for side in [node.left, *node.comparators])
            elif isinstance(node, ast.match_case):
                hit = any(_names_type(sub.value, words) for sub in ast.walk(node.pattern)
                          if isinstance(sub, ast.MatchValue))
            else:
                continue
            if hit:
                line = getattr(node, "lineno", None) or node.pattern.lineno
                found.append(f"{path.relative_to(ROOT)}:{line}: {ast.unparse(node)[:80]}")
    return found


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other (strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges[node]:
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def room(module: str) -> int:
    """0: the core; 1: adapters and builders; 2: the command line (`python -m genebench` included)."""
    if module.startswith("genebench.cli") or module == "genebench.__main__":
        return 2
    return 1 if module.startswith(("model_adapters", "dataset_builders")) else 0


def back_up(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports from a lower room into a higher one."""
    return sorted((source, target) for source, targets in edges.items() for target in targets
                  if room(target) > room(source))


def layers(edges: dict[str, set[str]]) -> dict[str, int]:
    """Each module's layer: 0 for one importing nothing of the packages, else one above what it imports (modules
    of a circle share one layer)."""
    group_of = {member: tuple(group) for group in circles(edges) for member in group}
    layer: dict[str, int] = {}

    def of(node: str, seen: frozenset[str]) -> int:
        if node in layer:
            return layer[node]
        group = group_of.get(node, (node,))
        below = [of(t, seen | set(group)) for m in group for t in edges[m] if t not in group and t not in seen]
        for member in group:
            layer[member] = 1 + max(below, default=-1)
        return layer[node]

    for node in sorted(edges):
        of(node, frozenset())
    return layer


def test_no_module_imports_itself_through_others_typing_imports_counted():
    found = circles(graph(typing=True))
    assert not found, f"{len(found)} import circles, e.g. {found[0]}"


def test_a_typing_import_counts_for_circles_only(tmp_path):
    """The check reads `if TYPE_CHECKING:` blocks: a typing import is an edge of the circle graph, not the layers'."""
    module = tmp_path / "mod.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from genebench.results import X\n"
                      "import genebench.errors\n")
    known = modules()
    assert imports("genebench.mod", module, known, typing=True) == {"genebench.results", "genebench.errors"}
    assert imports("genebench.mod", module, known) == {"genebench.errors"}


def test_at_most_one_import_runs_from_a_lower_room_back_up():
    found = back_up(graph())
    assert len(found) <= MAX_BACK_UP, f"{len(found)} imports run back up: {found}"


def test_the_graph_is_read_from_the_real_files():
    edges = graph()
    assert "genebench.probe.engine" in edges["genebench.pipeline"] or any(
        "genebench.probe" in target for target in edges["genebench.pipeline"])
    assert "genebench.errors" in edges["genebench.results"] or "genebench.errors" in {
        t for targets in edges.values() for t in targets}


def test_pipeline_fits_its_line_budget():
    lines = len((ROOT / "genebench" / "pipeline.py").read_text(encoding="utf-8").splitlines())
    assert lines <= PIPELINE_LINES, f"genebench/pipeline.py has {lines} lines, its budget is {PIPELINE_LINES}"


def test_no_function_over_its_line_budget_and_the_allow_list_only_shrinks():
    found = long_functions()
    new = {name: lines for name, lines in found.items() if name not in OVER_BUDGET}
    assert not new, f"functions over {FUNCTION_LINES} lines: {new}; split them"
    stale = {name: (found.get(name), lines) for name, lines in OVER_BUDGET.items() if found.get(name) != lines}
    assert not stale, f"listed functions whose length changed (now, listed): {stale}; lower OVER_BUDGET (or drop " \
        "the entry when it fits), never raise it"


def test_task_type_branches_go_through_the_type_table():
    found = type_branches()
    assert len(found) <= TYPE_BRANCHES, f"{len(found)} branches on task type or label shape outside " \
        f"{TYPE_TABLE} (at most {TYPE_BRANCHES}); give the type record a field or method instead: {found}"


def test_the_type_branch_count_sees_each_form(tmp_path):
    """A comparison with a type name or a tuple of them, a `case` on one and a label `ndim` test count; a plain
    string comparison does not."""
    code = ('if kind.target == "multilabel": pass\nif t in ("binary", "x"): pass\n'
            'match t:\n    case "regression": pass\nif labels.ndim == 2: pass\nif t == "cv": pass\n')
    hits = [node for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Compare) and any(
        _names_type(side, _type_words()) or _is_label_shape(side) for side in [node.left, *node.comparators])]
    cases = [node for node in ast.walk(ast.parse(code)) if isinstance(node, ast.match_case)
             and any(_names_type(sub.value, _type_words()) for sub in ast.walk(node.pattern)
                     if isinstance(sub, ast.MatchValue))]
    assert (len(hits), len(cases)) == (3, 1)


HEAVY = ("scipy.stats", "matplotlib", "datasets", "torch")


def test_import_and_help_load_no_heavy_library():
    import subprocess

    quiet = "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n    "
    code = ("import sys, contextlib, io\nimport genebench\nfrom genebench.cli import main\n"
            f"{quiet}main(['--help'])\n{quiet}main(['run', '--help'])\n{quiet}main(['sweep', '--help'])\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout[-500:]


if __name__ == "__main__":
    edges = graph()
    layer = layers(edges)
    for number in range(max(layer.values()) + 1):
        print(f"layer {number:2d}: " + " ".join(sorted(m for m, n in layer.items() if n == number)))
    print(f"\n{len(edges)} modules on {max(layer.values()) + 1} layers, {sum(map(len, edges.values()))} imports")
    for group in circles(graph(typing=True)):
        print("circle (typing imports counted): " + " <-> ".join(group))
    for source, target in back_up(edges):
        print(f"back up: {source} -> {target}")
    for function, lines in sorted(long_functions().items(), key=lambda item: -item[1]):
        print(f"over {FUNCTION_LINES} lines: {function} ({lines})")
    for branch in type_branches():
        print(f"type branch: {branch}")
    print(f"genebench/pipeline.py: {len((ROOT / 'genebench' / 'pipeline.py').read_text().splitlines())} lines")

