"""Install hints for optional libraries: genebench's own extras, by requirement, never PyPI's other "genebench"."""

from genebench.optional import RAY, TEXT, TORCH, extra_install


def test_install_hints_name_each_extras_requirements_from_the_installed_metadata():
    assert extra_install("ray") == 'pip install "ray[client,data]>=2.60"'
    assert extra_install("torch", besides=("torch",)) == 'pip install "transformers>=4.56" "sentence-transformers>=2.2"'
    assert TORCH.startswith("pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu && pip install "
                            '"transformers>=4.56"')
    assert not [hint for hint in (TORCH, RAY, TEXT) if "genebench[" in hint]  # that would install another project
