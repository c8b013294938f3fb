"""Helpers for ``scripts/make_captures.py``.

The package drives Bumble (a Python Bluetooth host stack with a virtual
controller) to produce small, deterministic btsnoop captures for the
bleanalyze test-suite:

* :mod:`captures.gatt_db`      - the peripheral's GATT database (spec + JSON export)
* :mod:`captures.testbed`      - a LocalLink with one central and one or more peripherals
* :mod:`captures.controllers`  - Controller subclasses for the fault scenarios
* :mod:`captures.scenarios`    - the scenario registry and the healthy scenarios
* :mod:`captures.faults`       - the fault scenarios (one per docs/RULES.md problem)
* :mod:`captures.expectations` - expected findings per capture (``*.expected.json``)
* :mod:`captures.rules`        - a reference implementation of docs/RULES.md (cross-check)
* :mod:`captures.findings`     - the finding model and the RULES.md thresholds
* :mod:`captures.btsnoop`      - a small btsnoop/HCI/L2CAP/ATT parser and summariser
* :mod:`captures.tools`        - optional Wireshark tools (editcap, capinfos, tshark)
* :mod:`captures.readme`       - renders ``captures/README.md``
"""
