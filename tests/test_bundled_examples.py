"""The bundled key models are real: identified (passive) from the repository's switch captures, and each
verifies against its own capture (CC-BY 4.0, bluepylons)."""

from __future__ import annotations

import pytest

from hapticam.capture_io import load_capture
from hapticam.models.files import load_model
from hapticam.models.passivity import check_passivity
from hapticam.render.verify import verify

from conftest import SWITCH_DIR

REAL_EXAMPLES = {"cherry-mx-red": "Cherry-MX-Red", "gateron-brown": "Gateron-Brown",
                 "kailh-box-jade": "NK-Kailh-Box-Jade"}


@pytest.mark.parametrize("name", sorted(REAL_EXAMPLES))
def test_bundled_key_is_passive_credited_and_verifies_against_its_capture(name):
    model, doc = load_model(f"example:{name}")
    assert check_passivity(model).passive
    assert "CC-BY 4.0" in " ".join(doc.provenance["notes"]) and "bluepylons" in " ".join(doc.provenance["notes"])
    capture = load_capture(SWITCH_DIR / f"{REAL_EXAMPLES[name]}.csv")
    assert doc.provenance["source"]["sha256"] == capture.sha256
    result = verify(model, capture)
    assert result.passed and result.features.noticeable == [], result.failures
    assert result.fit_percent >= 99.0
