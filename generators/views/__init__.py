"""Read-only projections of a finished plan that several renderers, reports and the hand-over share:
switch views (ports, VLANs, VRFs, BGP peers of each switch), the address plan, the NetBox object
model, the InfiniBand subnet as its tools see it. Views compute nothing a stage decides; stages never
import them.
"""
