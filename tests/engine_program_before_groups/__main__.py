"""The railyard Pulumi program as it was before files were grouped (commit 90105bc): one FileArtifact
resource per rendered file, kept by hash, under the Site -> Network/Folder -> Rack components.
`components/` here is a frozen copy of that commit's package; the engine tests put this folder first
on PYTHONPATH, so the program and the dynamic-provider process load that commit's code under the
real module names (`components.artifact.FileArtifactProvider`, as the state's pickled provider names
it), then switch the same stack to today's program as a user upgrading railyard would."""

from components.program import main

main()
