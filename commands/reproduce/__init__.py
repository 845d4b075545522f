"""``hapticam reproduce ...``: the papers' experiments (:mod:`~hapticam.commands.reproduce.papers` lists them),
each printed with our numbers beside the paper's."""
