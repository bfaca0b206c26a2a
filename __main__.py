"""Pulumi entry point (Pulumi.yaml): everything lives in components/ so providers pickle by reference."""

from components.program import main

main()
