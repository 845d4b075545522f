"""Hostile YAML gives one ModelFileError under either PyYAML reader: libyaml's and the pure-Python one
(PyYAML installs without libyaml where no wheel carries it, and the two refuse at different points)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import hapticam.bounded_yaml as bounded_yaml
from hapticam.errors import ModelFileError
from hapticam.models.files import load_model

from test_model_files import HOSTILE_YAML

LOADERS = [pytest.param(yaml.SafeLoader, id="python")]
if getattr(yaml, "CSafeLoader", None) is not None:
    LOADERS.append(pytest.param(yaml.CSafeLoader, id="libyaml"))

CASES = {**HOSTILE_YAML,
         "nul-byte": ("format: hapticam-model\x00\n", "not valid YAML"),
         "control-character": ("format: hapticam-model\x07\n", "not valid YAML"),
         "deep": ("[" * 40 + "]" * 40, "nested deeper than 32")}


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_yaml_is_one_error_under_either_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       loader, case: str) -> None:
    monkeypatch.setattr(bounded_yaml, "LOADER", loader)
    text, expected = CASES[case]
    text = text() if callable(text) else text
    path = tmp_path / "m.yaml"
    path.write_bytes(text.encode())
    with pytest.raises(ModelFileError, match=expected):
        load_model(path)
