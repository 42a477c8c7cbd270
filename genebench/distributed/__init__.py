"""Encode and probe on a Ray cluster (`--engine ray`): the same work as a local run, spread over workers.

Ray is an optional dependency (the `ray` extra, see `genebench.optional.RAY`); it is imported only when a
`RayEngine` starts, so the core never needs it. The driver stays the only writer: encoded genes come back to it
and go into the same embedding cache as a local run, and probe results come back to it and are written one file
per task as they finish. Scores do not depend on the engine or on the number of workers.
"""

from genebench.distributed.engine import RayEngine

__all__ = ["RayEngine"]
