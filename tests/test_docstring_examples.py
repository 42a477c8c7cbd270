"""Every docstring example in the packages runs as written (examples marked `+SKIP` need a network or a model)."""

import doctest
import importlib
import pkgutil

import pytest

import dataset_builders
import genebench
import model_adapters

MODULES = sorted(info.name for package in (genebench, model_adapters, dataset_builders)
                 for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
                 if not info.name.endswith(".__main__"))  # importing it runs the command line


def test_every_module_is_found():
    assert {"genebench.probe.design", "genebench.pipeline", "model_adapters.baselines"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run_as_written(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see the output above)"
