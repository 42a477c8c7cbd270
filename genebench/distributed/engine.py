"""`RayEngine`: a connection to a Ray cluster, and the two kinds of work genebench sends to it."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator, Sequence
from types import ModuleType, TracebackType
from typing import Any

from genebench.constants import CHUNK_SIZE
from genebench.embeddings import GeneEmbeddings
from genebench.errors import GenebenchError
from genebench.optional import RAY, import_optional

logger = logging.getLogger(__name__)


def import_ray() -> ModuleType:
    """The `ray` module, or an error naming the command that installs it."""
    return import_optional("ray", needed_for="--engine ray", install=RAY)


def local_threads() -> int:
    """The BLAS threads this process computes with (what `--engine local` uses)."""
    from threadpoolctl import threadpool_info

    return max([int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"] or [1])


CONNECT_TIMEOUT_S = 60.0
"""How long joining a Ray cluster (not starting a local one) may take before the run stops with one line."""


def _reach(address: str, timeout: float) -> None:
    """Raise unless `address` (HOST:PORT or ray://HOST:PORT) parses and a TCP connection to it opens in `timeout`."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise GenebenchError(f"--ray-address {address!r}: expected 'local', 'auto', HOST:PORT or ray://HOST:PORT; pass "
                             "the address `ray start --head` printed.")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise GenebenchError(f"--ray-address {address}: cannot reach {host}:{port} ({exc.strerror or exc}); check the "
                             "address, start a cluster with `ray start --head`, or pass 'local'.") from None


def _init_within(ray: ModuleType, timeout: float, **init_args: Any) -> None:
    """`ray.init(**init_args)`, given up after `timeout` seconds: Ray retries an address that answers but is no
    Ray cluster forever, and no timer interrupts it, so it runs in a daemon thread."""
    failure: list[BaseException] = []

    def connect() -> None:
        try:
            ray.init(**init_args)
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=connect, name="ray-connect", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise GenebenchError(f"--ray-address {init_args['address']}: no Ray cluster answered within {timeout:g} s; "
                             "check the address and port (`ray status` on the head node), or pass 'local'.")
    if failure:
        raise failure[0]


def _ready() -> bool:
    """A task that does nothing: running it starts a worker with the engine's options."""
    return True


class RayEngine:
    """Encoding and probing on a Ray cluster; a context manager that connects when the first work is sent.

    Every encoding worker computes with `threads` threads, as a local run on this machine does: BLAS sums in a
    different order with another thread count, and identical vectors across engines need identical sums. An
    encoding actor therefore reserves `threads` CPUs. A probe computes with one BLAS thread wherever it runs
    (`genebench.parallel.core_threads`), on one CPU.

    Args:
        address: None or "local" starts a Ray instance on this machine (stopped on exit); "auto" joins the
            cluster that `ray start` runs here; "ray://HOST:10001" connects through Ray Client. When Ray is
            already initialised in this process, that connection is used and left open.
        threads: threads per encoding worker (default: the BLAS threads of this process, what a local run uses).
        chunk_size: genes per Ray Data block (one actor call, one write to the embedding cache).
        connect_timeout: seconds joining a cluster may take before it fails with one line (`CONNECT_TIMEOUT_S`).
        init_args: further `ray.init` arguments for a local instance (e.g. `num_cpus=2`).

    Examples:
        >>> with RayEngine(num_cpus=2) as engine:  # doctest: +SKIP
        ...     print(engine.resources())
        {'CPU': 2.0, ...}
    """

    name = "ray"

    def __init__(self, address: str | None = None, *, threads: int | None = None, chunk_size: int = CHUNK_SIZE,
                 connect_timeout: float = CONNECT_TIMEOUT_S, **init_args: Any) -> None:
        self.address = address
        self.connect_timeout = connect_timeout
        self.chunk_size = chunk_size
        self.threads = threads or local_threads()
        self.init_args = init_args
        self._started = False
        self._connected = False

    @property
    def worker_options(self) -> dict[str, Any]:
        """Ray options of every actor and task: `threads` CPUs, and the thread count set before numpy or torch
        load."""
        count = str(self.threads)
        env = {name: count for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
        return {"num_cpus": self.threads, "runtime_env": {"env_vars": env}}

    def __enter__(self) -> RayEngine:
        import_ray()  # a missing install fails here, before any work
        return self

    def connect(self) -> RayEngine:
        """Join or start the cluster, once: the first piece of work connects, so a command that finds everything
        done (a finished sweep, a resumed run) never starts Ray."""
        if self._connected:
            return self
        ray = import_ray()
        if not ray.is_initialized():
            local = self.address in (None, "local")
            args = {"address": "local" if local else self.address, "logging_level": logging.WARNING,
                    "log_to_driver": False, **({"include_dashboard": False, **self.init_args} if local else {})}
            try:
                if local:
                    ray.init(**args)
                else:
                    if self.address != "auto":
                        _reach(self.address, self.connect_timeout)
                    _init_within(ray, self.connect_timeout, **args)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise GenebenchError(f"--ray-address {self.address}: cannot connect to a Ray cluster ({exc}); start "
                                     "one with `ray start --head` or pass 'local'.") from exc
            self._started = True
        import ray.data

        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # genebench shows one bar over all workers
        logging.getLogger("ray.data").setLevel(logging.ERROR)  # and says itself what runs where
        context.print_on_execution_start = False
        self._connected = True
        logger.info("Ray cluster: %s", ", ".join(f"{k} {v:g}" for k, v in sorted(self.resources().items())
                                                  if k in ("CPU", "GPU")))
        ray.get(ray.remote(_ready).options(**self.worker_options).remote())  # start a worker now, not in task 1
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._started:
            import_ray().shutdown()
            self._started = False
        self._connected = False

    def resources(self) -> dict[str, float]:
        """The cluster's total resources (CPU, GPU, memory, ...)."""
        self.connect()
        return dict(import_ray().cluster_resources())

    def encode_chunks(self, encoder: Any, symbols: Sequence[str], chunk_size: int) -> Iterator[tuple[list[str],
                                                                                                    GeneEmbeddings]]:
        """Encode `symbols` on the cluster (see `genebench.distributed.encoding.encode_chunks`)."""
        from genebench.distributed.encoding import encode_chunks

        return encode_chunks(encoder, symbols, chunk_size, self.resources(), self.worker_options)

    def iter_task_scores(self, tasks: Sequence, embeddings: GeneEmbeddings, settings=None, *,
                         partner_embeddings: GeneEmbeddings | None = None) -> Iterator:
        """Score tasks on the cluster (see `genebench.distributed.probing.iter_task_scores`)."""
        from genebench.distributed.probing import iter_task_scores

        self.connect()
        return iter_task_scores(tasks, embeddings, settings, partner_embeddings=partner_embeddings)
