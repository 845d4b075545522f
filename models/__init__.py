"""Model types, their validation, the numba force kernels, and model files.

Model kinds (the ``kind`` field of a model file):

- ``segmented-impedance``: :class:`SegmentedImpedance` (seed 001 eq. 8)
- ``contact``: :class:`Contact` (seed 004 eq. 2.1; Hunt-Crossley, seed 000 eq. 26)
- ``friction``: :class:`Friction` (Coulomb + viscous, Stribeck seed 003 eq. 5, Karnopp, LuGre)
- ``hybrid-key``: :class:`HybridKey` (the piano key/hammer, seed 000 section 1)
- ``end-stops``: :class:`EndStops` (workspace end stops)
- ``composite``: :class:`Composite` (a sum of the above)
"""

from hapticam.models.base import MODEL_KINDS, CompiledModel, Model, model_from_dict
from hapticam.models.composite import Composite, EndStops
from hapticam.models.contact import Contact
from hapticam.models.friction import Friction
from hapticam.models.hybrid_key import HybridKey
from hapticam.models.impedance import ImpedanceTable, SegmentedImpedance, position_table
from hapticam.models.kernels import model_diag, model_flags, model_force
from hapticam.models.passivity import PassivityReport, check_passivity

__all__ = [
    "MODEL_KINDS", "CompiledModel", "Model", "model_from_dict", "Composite", "EndStops", "Contact",
    "Friction", "HybridKey", "ImpedanceTable", "SegmentedImpedance", "position_table", "model_flags",
    "model_force", "model_diag", "PassivityReport", "check_passivity",
]
