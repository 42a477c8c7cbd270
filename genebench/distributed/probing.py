"""Probing on a Ray cluster: one Ray task per unit of work, the embedding table in the object store once.

A unit is one fitted task, or a multi-label task with the derived binary tasks scored from its fit
(`genebench.probe.engine.task_units`). The driver builds one `ProbeEngine` per model (tables checked, bases
computed) and puts it in the object store once; every Ray task reads it from there and runs exactly the code
a local run runs on its unit, so scores are the same on any number of workers. Results come back to the driver
as units finish; the caller writes them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import signal
import threading
from collections.abc import Iterator, Sequence

from threadpoolctl import threadpool_limits

from genebench.embeddings import GeneEmbeddings
from genebench.errors import DistributedError, worker_error
from genebench.probe.engine import ProbeEngine, TaskScores, task_units, unit_cost
from genebench.probe.settings import ProbeSettings
from genebench.tasks.task import Task

logger = logging.getLogger(__name__)


def _score_unit(engine: ProbeEngine, unit: list[Task]) -> tuple[str, list[TaskScores]]:
    """The body of a Ray task: the unit's scores (without their tasks, which the driver holds) and the node."""
    import ray

    node = ray.util.get_node_ip_address()
    try:
        with threadpool_limits(1, user_api="blas"):  # as a local probe computes (`core_threads`): the same bits
            return node, [dataclasses.replace(scores, task=None) for scores in engine.score_unit(unit)]
    except Exception as exc:
        raise DistributedError(f"probing task '{unit[0].name}' failed on node {node}: "
                               f"{type(exc).__name__}: {exc}") from exc


@contextlib.contextmanager
def _deferred_ctrl_c() -> Iterator[threading.Event]:
    """Ctrl-C as a flag, set while the block runs: the driver raises `KeyboardInterrupt` between Ray calls, never
    inside one (a SIGINT inside Ray's client calls can abort its core worker: "Tried to complete task that was not
    pending"). Off the main thread, where no handler can be set, the flag is never set."""
    pressed = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield pressed
        return
    previous = signal.signal(signal.SIGINT, lambda *_: pressed.set())
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def iter_task_scores(tasks: Sequence[Task], embeddings: GeneEmbeddings, settings: ProbeSettings | None = None, *,
                     partner_embeddings: GeneEmbeddings | None = None) -> Iterator[TaskScores]:
    """Score tasks on the connected Ray cluster, yielding each task's scores as its unit finishes.

    The same contract as `genebench.probe.engine.iter_task_scores`: a unit is one Ray task on one CPU, computing
    with one BLAS thread as a local probe does. A failed unit does not stop the others; once every other unit is
    yielded, a `DistributedError` names each failed task and its node. Closing the iterator early (Ctrl-C)
    cancels the units still running.

    Raises:
        EmbeddingError: unusable embeddings, before any task runs.
        DistributedError: one or more units failed.
    """
    import ray

    engine = ProbeEngine(embeddings, settings or ProbeSettings(), partner_embeddings).precompute()
    engine_ref = ray.put(engine)
    remote = ray.remote(_score_unit).options(max_retries=2, num_cpus=1)
    units = {remote.remote(engine_ref, unit): unit for unit in sorted(task_units(tasks), key=unit_cost, reverse=True)}
    failures: list[str] = []
    with _deferred_ctrl_c() as pressed:
        try:
            while units:
                if pressed.is_set():
                    raise KeyboardInterrupt
                ready, _ = ray.wait(list(units), num_returns=1, timeout=0.25)
                if not ready:
                    continue
                (done,) = ready
                unit = units.pop(done)
                try:
                    node, scored = ray.get(done)
                except ray.exceptions.RayError as exc:
                    failures.append(worker_error(exc, f"probing task '{unit[0].name}'"))
                    logger.error("%s", failures[-1])
                    continue
                for task, scores in zip(unit, scored):  # `score_unit` yields in the unit's order
                    yield dataclasses.replace(scores, task=task)
                logger.debug("unit '%s' scored on node %s", unit[0].name, node)
        finally:  # Ctrl-C, or the caller stopped early: cancel what is left, and let it settle before Ray shuts down
            for ref in units:
                ray.cancel(ref)  # not forced: a unit that finishes as it is cancelled still completes cleanly
            if units:
                ray.wait(list(units), num_returns=len(units), timeout=30)
    if failures:
        raise DistributedError(f"{len(failures)} of the probe units failed; every other result is written, rerun to "
                               f"retry: {'; '.join(failures)}")

