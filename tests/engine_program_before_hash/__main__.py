"""The railyard Pulumi program as it was before artifacts were kept in the state by hash (commit
9c25dee): the FileArtifact's whole content was a diffed input, so it sat in the state and filled
`pulumi preview --diff`. `components/` here is a frozen copy of that commit's package; the engine
tests put this folder first on PYTHONPATH, so the program *and* the dynamic-provider process load
the old `components.artifact.FileArtifactProvider` under its real module name. The pickled provider
reference in the state is therefore byte for byte what a stack made by that commit holds, and the
test then switches the same stack to today's code exactly as a user upgrading railyard would."""

from components.program import main

main()
