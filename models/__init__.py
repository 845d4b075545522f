"""Model types, their validation, the numba force kernels, and model files.

Model kinds (the ``kind`` field of a model file):

- ``segmented-impedance``: :class:`SegmentedImpedance` (seed 001 eq. 8)
- ``contact``: :class:`Contact` (seed 004 eq. 2.1; Hunt-Crossley, seed 000 eq. 26)
- ``friction``: :class:`Friction` (Coulomb + viscous, Stribeck seed 003 eq. 5, Karnopp, LuGre)
- ``hybrid-key``: :class:`HybridKey` (the piano key/hammer, seed 000 section 1)
- ``end-stops``: :class:`EndStops` (workspace end stops)
- ``composite``: :class:`Composite` (a sum of the above)
"""

from hapticam.lazy_exports import lazy_exports

#: public name -> the module that defines it; loaded on first use (PEP 562), so importing the
#: package does not load numba or scipy
_EXPORTS = {
    "MODEL_KINDS": "hapticam.models.base",
    "CompiledModel": "hapticam.models.base",
    "Model": "hapticam.models.base",
    "model_from_dict": "hapticam.models.base",
    "Composite": "hapticam.models.composite",
    "EndStops": "hapticam.models.composite",
    "Contact": "hapticam.models.contact",
    "Friction": "hapticam.models.friction",
    "HybridKey": "hapticam.models.hybrid_key.model",
    "ImpedanceTable": "hapticam.models.impedance",
    "SegmentedImpedance": "hapticam.models.impedance",
    "position_table": "hapticam.models.impedance",
    "model_flags": "hapticam.models.kernels",
    "model_force": "hapticam.models.kernels",
    "model_diag": "hapticam.models.kernels",
    "PassivityReport": "hapticam.models.passivity",
    "check_passivity": "hapticam.models.passivity",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
