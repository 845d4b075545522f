"""Friction identification.

Seed 003 (Wadi, Mukhopadhyay & Romdhane): the tilted Furuta pendulum (:mod:`.furuta`, with Coriolis terms
derived from its inertia matrix), the values the paper prints and omits (:mod:`.paper`), the Mittag-Leffler
Nussbaum gain (:mod:`.mittag_leffler`), the UAS observer as published (:mod:`.uas`; its parameters are the
end points of eq. 23, not identified friction), the grey-box fit of the identifiable combinations that is
the default (:mod:`.greybox`, :mod:`.shooting`), and ``hapticam reproduce seed003-furuta`` /
``hapticam bench identify`` (:mod:`.reproduce`, :mod:`.bench`). The product's ``identify friction``
(spin-down of a knob, a key pressed at several speeds) lives beside them.
"""
