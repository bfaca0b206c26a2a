"""NVIDIA NVOS (Quantum-X800 XDR InfiniBand switches). As on MLNX-OS, railyard configures no switch of
the InfiniBand backend one by one: the subnet manager (OpenSM or UFM) programs the fabric, so what
this OS renders is the same OpenSM files, expected topology and UFM bodies. It is its own OS so the
catalog, the BoM and NetBox say what the switch runs, and so NVOS-only settings have a home."""

from __future__ import annotations

from generators.renderers.infiniband import render_infiniband
from generators.vendors.base import Vendor

VENDOR = Vendor(
    name="nvos",
    serves=frozenset({"infiniband"}),
    render_backend=render_infiniband,
)
