"""The dataset card (README.md) of a data folder: `configs:` YAML for `load_dataset`, then the card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import yaml

from genebench.atomic import write_atomic
from genebench.tasks.families import DOMINANT_SHARE
from genebench.tasks.metadata import CATEGORIES

_SUMMARY = """\
genebench turns curated gene properties into probe tasks, following "Does your model understand genes?"
(Kan-Tor et al., arXiv 2412.04075) and PerturbQA (Wu et al., ICLR 2025). A model's gene representations are
scored by linear probes on each task, under the cross-validation folds stored here.
"""

_LAYOUT = """\
## Data fields

Every family config uses one long layout: **one row per (task, entity)**.

| field | type | meaning |
|---|---|---|
| `task` | string | task name (see `tasks` config) |
| `entity` | string | current HGNC gene symbol |
| `entity_2` | string or null | the partner of a pair task (a gene, a read-out gene or a disease id) |
| `labels` | list of strings | class name(s); several for multi-label tasks, empty for regression |
| `value` | float or null | regression target |
| `fold` | int8 | held-out fold (the paper's folds); -1 = train-only rows of a train-test task |
| `family_fold` | int8 | held-out fold with gene families held out; equal to `fold` for pair and train-test tasks |

Tasks with different gene sets and label spaces live cleanly in one config this way: a wide table would need
one sparse column per task. Splits are the folds (`fold_0` … `fold_4`; PerturbQA keeps its published
`train`/`test`), so `load_dataset(DIR, "humantfs", split="fold_0")` is one held-out fold. Derived binary tasks
("Pathways;Immune System") have no rows of their own: they are one label of their multi-label parent and share
its folds. The `tasks` config holds one metadata row per task, and `symbols` the HGNC table used to
normalise symbols.

## Folds

Folds are seeded and stratified, computed once at build time (see `genebench/tasks/folds.py` for the exact
algorithm): rows in entity order, a per-task generator seeded by sha256 of "<seed>:<task name>", classes dealt
round-robin for binary/categorical tasks, iterative stratification (Sechidis et al. 2011) for multi-label tasks.

Pair tasks with `fold_scheme` "cold genes" ("Gene2Gene (cold genes)") split the genes into one seeded group per
fold and keep only the pairs whose two genes share a group, the fold being that group: no gene of a held-out pair
appears in any training pair. The task's `symbol_report.n_cross_group` counts the pairs this leaves out.
PerturbQA keeps its published split, which is cold for perturbations already: no perturbed gene of `test` is
perturbed in `train` (read-out genes do recur, and each is scored on its own by `auc_per_gene`).

Family folds (`family_fold`, step 6 of the algorithm) hold gene families out: a gene's family is its most
specific HGNC gene group, else its symbol stem (`genebench/tasks/families.py`), and whole families are assigned
to folds by a seeded, label-stratified greedy like scikit-learn's `StratifiedGroupKFold`. Paralogs then never sit
on both sides of a split, so a probe cannot score a held-out gene by looking up its family. Each task's metadata
records its `family_report` (largest family share, fold imbalance, positives per fold, labels that miss a fold; the
task table's "largest family", marked where one family holds more than a third of the task) and, where its
labels cannot be split by family (HLA class I vs II), `family_unscorable` with the reason.
"""

_CONTROLS = """## Controls

`controls/` holds the control baselines on every task under both fold schemes, scored with the default probe from
the data alone (`genebench/controls/table.py`):

{table}

`controls/scores.parquet` holds each control's main score per (fold scheme, task), with a seeded control's spread and
number of seeds; `controls/<control>-<folds>.parquet` holds what each other control predicted for every held-out row
(logits, log-probabilities for categorical tasks, as float16, or as float32 in `<control>-<folds>-float32.parquet` for
the few small tasks whose score float16 would move by more than 0.001; the table gives each task's file, offset and
shape), so the controls can be scored on any subset of rows without refitting. They are listed in `genebench.json`
with their sha256 and covered by the data revision, and each block is checked against its stored score when it is
read. A task on which a control reaches ROC AUC 0.9 is shortcut-solvable: a high score there need not mean that a
model understands genes. genebench records each model's lift over the best control with every result.
"""


def write_card(out: Path, manifest: dict[str, Any]) -> None:
    """Write `out/README.md` for the families in `manifest`, atomically."""
    families = manifest["families"]
    configs = [
        {"config_name": name,
         "data_files": [{"split": split, "path": f"{name}/{split}.parquet"} for split in entry["splits"]]}
        for name, entry in sorted(families.items())
    ]
    configs += [
        {"config_name": table["config"], "data_files": [{"split": "train", "path": table["path"]}]}
        for _, entry in sorted(families.items()) for _, table in sorted(entry.get("auxiliary", {}).items())
    ]
    configs.append({"config_name": "tasks", "data_files": [
        {"split": "train", "path": [f"{name}/tasks.parquet" for name in sorted(families)]}]})
    if (out / "symbols" / "hgnc.parquet").exists():
        configs.append({"config_name": "symbols", "data_files": [{"split": "train", "path": "symbols/hgnc.parquet"}]})
    if (out / "descriptions" / "refseq.parquet").exists():
        configs.append({"config_name": "descriptions",
                        "data_files": [{"split": "train", "path": "descriptions/refseq.parquet"}]})
    header = {
        "pretty_name": "genebench",
        "license": "other",
        "language": ["en"],
        "tags": ["biology", "genomics", "genes", "benchmark", "linear-probe"],
        "configs": configs,
    }
    tasks = _task_table(out, families)
    text = "\n".join([
        "---", yaml.safe_dump(header, sort_keys=False).strip(), "---", "",
        "# genebench", "", _SUMMARY,
        f"Data revision `{manifest.get('data_hash', '?')}`, built with genebench {manifest.get('genebench_version')}.",
        "", "## Supported tasks", "", _overview(tasks), "", tasks.to_markdown(index=False) if len(tasks) else "", "",
        *_sizes(out, families), _LAYOUT, *_controls(manifest.get("controls")), "## Source data", "",
        *_sources(families),
        *_differences(families), *_dropped(out, families), "## Licensing", "",
        "Each family keeps its source's licence (table above). Cite the sources you use.", "",
        "## Citation", "", "```bibtex", *(entry["citation"] for entry in families.values()), "```", "",
    ])
    write_atomic(out / "README.md", text)


PAPER_SIZES = Path(__file__).parent / "tasks" / "paper_sizes.csv"
"""The paper's task table (task_descriptions.xlsx, sheet "Tasks descriptions": paper_task, paper_family, paper_type,
paper_size; Apache-2.0), each row's genebench task, and why a gap over `MAX_SIZE_GAP` is expected (gap_cause:
release, source or drops; gap_reason in words)."""
MAX_SIZE_GAP = 0.10
"""A task's size may differ from the paper's by this share without a recorded reason."""


def size_comparison(sizes: dict[str, int]) -> pd.DataFrame:
    """Every task of `sizes` (task -> rows) that the paper also has: its size beside the paper's, the gap, and the
    reason of a gap over `MAX_SIZE_GAP` ("unexplained" where `PAPER_SIZES` records none).

    Examples:
        >>> size_comparison({"TF vs non-TF": 2757, "UniProt keyword PTM": 100}).to_dict("records")[0]["gap"]
        '-0.3%'
    """
    table = pd.read_csv(PAPER_SIZES, dtype=str, keep_default_na=False)
    table = table[table["task"].isin(list(sizes)) & (table["paper_size"] != "")]
    ours = table["task"].map(sizes).astype(int)
    gap = ours / table["paper_size"].astype(int) - 1
    reason = (table["gap_cause"] + ": " + table["gap_reason"]).where(table["gap_cause"] != "", "unexplained")
    return pd.DataFrame({
        "task": table["task"], "paper task": table["paper_task"], "paper size": table["paper_size"].astype(int),
        "size": ours, "gap": gap.map("{:+.1%}".format), "reason": reason.where(gap.abs() > MAX_SIZE_GAP, ""),
    }).sort_values("task", key=lambda names: names.str.lower()).reset_index(drop=True)


def unexplained_gaps(sizes: dict[str, int]) -> list[str]:
    """The tasks of `sizes` whose size differs from the paper's by more than `MAX_SIZE_GAP` with no recorded
    reason, each with the figures."""
    table = size_comparison(sizes)
    table = table[table["reason"] == "unexplained"]
    return [f"{row.task}: {row.size} vs the paper's {row._3} ({row.gap})" for row in table.itertuples()]


def _sizes(out: Path, families: dict[str, Any]) -> list[str]:
    sizes = {}
    for name in sorted(families):
        if (out / name / "tasks.parquet").exists():
            table = pq.read_table(out / name / "tasks.parquet", columns=["name", "n_entities"])
            sizes |= dict(zip(table["name"].to_pylist(), table["n_entities"].to_pylist()))
    table = size_comparison(sizes)
    if not len(table):
        return []
    return ["## Task sizes against the paper", "",
            f"Rows (genes, or pairs) of each task the paper also has, beside the paper's own table, with the reason "
            f"of any gap over {MAX_SIZE_GAP:.0%} (`genebench/tasks/paper_sizes.csv`).", "",
            table.to_markdown(index=False), ""]


def _task_table(out: Path, families: dict[str, Any]) -> pd.DataFrame:
    frames = [pq.read_table(out / name / "tasks.parquet").to_pandas() for name in sorted(families)
              if (out / name / "tasks.parquet").exists()]
    if not frames:
        return pd.DataFrame()
    frame = pd.concat(frames, ignore_index=True)
    frame = frame[frame["parent"].isna()]  # derived tasks are counted beside their parent
    derived = pd.concat(frames)["parent"].value_counts()
    return pd.DataFrame({
        "task": frame["name"], "family": frame["family"], "category": frame["category"], "type": frame["type"],
        "rows": frame["n_entities"], "labels": frame["label_names"].map(len),
        "derived tasks": frame["name"].map(derived).fillna(0).astype(int),
        "largest family": frame["family_report"].map(_largest_family),
    })


def _largest_family(report: str | None) -> str:
    """A task's largest family share as the task table shows it, marked where one family dominates the task."""
    share = json.loads(report or "{}").get("largest_family_share")
    if share is None:
        return ""
    return f"{share:.0%}" + (" (family-dominated)" if share > DOMINANT_SHARE else "")


def _overview(tasks: pd.DataFrame) -> str:
    if not len(tasks):
        return "No families built yet."
    counts = tasks.groupby("category").size().reindex(CATEGORIES, fill_value=0)
    total = len(tasks) + int(tasks["derived tasks"].sum())
    lines = [f"{total} tasks ({len(tasks)} below plus {int(tasks['derived tasks'].sum())} derived binary tasks).", ""]
    lines += [f"- {category}: {n} tasks" for category, n in counts.items()]
    return "\n".join(lines)


def _controls(controls: dict[str, Any] | None) -> list[str]:
    if not controls:
        return []
    flagged = controls.get("shortcut_solvable", {}) if "folds" in controls else {}  # per scheme since both exist
    from genebench.controls.table import CONTROLS

    table = "\n".join(f"- `{name}`: {control.features}; guards against {control.guards}."
                      for name, control in CONTROLS.items())
    names = ", ".join(f"`{name}`" for name in controls.get("names", list(CONTROLS)))
    lines = [_CONTROLS.format(table=table), f"This folder holds {names}, computed in {controls['seconds']} s with "
             f"genebench {controls['genebench_version']}."]
    for scheme, tasks in sorted(flagged.items()):
        lines += ["", f"Shortcut-solvable under {scheme} folds ({len(tasks)} tasks):", ""]
        lines += [f"- {task}: {control} {score:.3f}" for task, (control, score) in sorted(tasks.items())]
    return [*lines, ""]


def _differences(families: dict[str, Any]) -> list[str]:
    """Per family: how it differs from the reference, declared tasks its sources lacked, auxiliary tables."""
    lines = []
    for name, entry in sorted(families.items()):
        items = [entry["differences"]] if entry.get("differences") else []
        items += [f"Skipped '{task}': {reason}" for task, reason in entry.get("skipped_tasks", {}).items()]
        items += [f"Auxiliary table `{table['config']}` ({table['path']}, {table['n_rows']} rows)."
                  for table in entry.get("auxiliary", {}).values()]
        if items:
            lines += [f"### {name}", "", *(f"- {item}" for item in items), ""]
    return ["## Differences from the reference and auxiliary tables", "", *lines] if lines else []


def _dropped(out: Path, families: dict[str, Any]) -> list[str]:
    """The labels of a source that tasks left out (`TaskMetadata.dropped_labels`), per task, grouped by reason."""
    lines = []
    for name in sorted(families):
        path = out / name / "tasks.parquet"
        if not path.exists() or "dropped_labels" not in pq.read_schema(path).names:
            continue
        for record in pq.read_table(path, columns=["name", "dropped_labels"]).to_pylist():
            by_reason: dict[str, list[str]] = {}
            for label, reason in json.loads(record["dropped_labels"] or "{}").items():
                by_reason.setdefault(reason, []).append(label)
            lines += [f"- '{record['name']}': {len(labels)} labels dropped ({', '.join(labels)}): {reason}"
                      for reason, labels in by_reason.items()]
    return ["## Labels left out", "", *lines, ""] if lines else []


def _sources(families: dict[str, Any]) -> list[str]:
    lines = ["| family | source | version used | licence |", "|---|---|---|---|"]
    for name, entry in sorted(families.items()):
        for key, source in entry["sources"].items():
            version = entry["source_versions"].get(key, source["version"])
            lines.append(f"| {name} | [{key}]({source['url']}) | {version} | {entry['license']} |")
        lines.append(f"| {name} | HGNC (symbols) | {entry['source_versions'].get('hgnc', '?')} | CC0-1.0 |")
    return [*lines, ""]
