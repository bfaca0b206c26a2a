"""NVIDIA MLNX-OS (Quantum InfiniBand switches). Railyard configures no switch of the InfiniBand
backend one by one: the subnet manager programs the fabric, so what this OS renders is the OpenSM
files, the expected topology and the UFM bodies of ``generators.renderers.infiniband`` (also used
with as-built GUIDs by ``railyard verify --write-config``)."""

from __future__ import annotations

from generators.renderers.infiniband import render_infiniband
from generators.vendors.base import Vendor

VENDOR = Vendor(
    name="mlnx-os",
    serves=frozenset({"infiniband"}),
    render_backend=render_infiniband,
)
