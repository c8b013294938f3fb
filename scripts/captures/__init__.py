"""Helpers for ``scripts/make_captures.py``.

The package drives Bumble (a Python Bluetooth host stack with a virtual
controller) to produce small, deterministic btsnoop captures for the
bleanalyze test-suite:

* :mod:`captures.gatt_db`   - the peripheral's GATT database (spec + JSON export)
* :mod:`captures.testbed`   - a LocalLink with one central and one peripheral
* :mod:`captures.scenarios` - the scenario registry (one function per capture)
* :mod:`captures.btsnoop`   - a small btsnoop/HCI/L2CAP/ATT summariser
* :mod:`captures.tools`     - optional Wireshark tools (editcap, capinfos, tshark)
* :mod:`captures.readme`    - renders ``captures/README.md``
"""
