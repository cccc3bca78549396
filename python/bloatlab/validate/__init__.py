"""``bloatlab validate``: the simulator against real Linux TCP over a matrix of scenarios.

- :mod:`.matrix`  the cells (a dataclass each) and the scenario every cell runs
- :mod:`.metrics` what is compared, the relative error and the verdict against the targets
- :mod:`.run`     simulating and emulating the cells, one at a time
- :mod:`.report`  validate.json, report.md, report.html (+ heatmap.png)
- :mod:`.cli`     the ``validate`` command

See docs/fidelity.md.
"""
