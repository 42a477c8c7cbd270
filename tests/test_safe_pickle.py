"""The restricted unpickler: builtin data passes, any other global is refused."""

from __future__ import annotations

import collections
import io
import os
import pickle

import pytest

from genebench.errors import SourceFormatError
from genebench.safe_pickle import safe_load


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_builtin_containers_numbers_and_strings_load(protocol):
    value = {"ENSG00000141510": 2, "nested": [1.5, (True, None), {"a", "b"}, frozenset({3}), 2j],
             "ordered": collections.OrderedDict(k=1)}
    assert safe_load(io.BytesIO(pickle.dumps(value, protocol=protocol))) == value


class Payload:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


@pytest.mark.parametrize("payload", [Payload(), collections.Counter(a=1), os.getpid])
def test_any_other_global_is_refused(payload):
    with pytest.raises(SourceFormatError, match="expected only builtin containers, numbers and strings"):
        safe_load(io.BytesIO(pickle.dumps(payload)))


def test_garbage_is_a_format_error():
    with pytest.raises(SourceFormatError, match="pickle '<stream>'"):
        safe_load(io.BytesIO(b"not a pickle"))
