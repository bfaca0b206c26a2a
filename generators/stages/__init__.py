"""The compiler's stages, in pipeline order: fabric -> placement -> invariants -> cabling -> network plan
-> Slurm -> InfiniBand -> BoM. Each refines the plan and reads only what earlier stages wrote."""
