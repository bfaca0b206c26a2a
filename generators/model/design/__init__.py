"""The cluster design: its schema (pydantic, `schema`), its rules against the parts catalog
(`validation`), the resolved design the stages read (`resolved`) and the loader that runs them in
order (`loader`). Import the names below from here.
"""

from generators.model.design.loader import load_design
from generators.model.design.resolved import (
    attached_nodes,
    backend_speed,
    management_model,
    rack_model_key,
    resolve_system,
    resolved_config,
    server_names,
    server_width,
    storage_fabric_ports,
    storage_fabric_speed,
    tenant_members,
    with_management_on_fabric,
)
from generators.model.design.schema import (
    MAX_PDUS,
    Backend,
    CatalogOverlay,
    Compute,
    Design,
    Frontend,
    RackRole,
    Tenant,
    ratio_value,
)
from generators.model.design.validation import check_against_catalog

__all__ = [
    "MAX_PDUS",
    "Backend",
    "CatalogOverlay",
    "Compute",
    "Design",
    "Frontend",
    "RackRole",
    "Tenant",
    "attached_nodes",
    "backend_speed",
    "check_against_catalog",
    "load_design",
    "management_model",
    "rack_model_key",
    "ratio_value",
    "resolve_system",
    "resolved_config",
    "server_names",
    "server_width",
    "storage_fabric_ports",
    "storage_fabric_speed",
    "tenant_members",
    "with_management_on_fabric",
]
