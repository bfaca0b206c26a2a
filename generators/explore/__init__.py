"""`railyard explore`: the design-space search. A space file names bundles of settings and candidate values
for design fields (`space`); each variant is the base design with one choice per axis (`variant`), compiled
by the compiler's own stages without rendering a file (`evaluate`), measured (`metrics`), searched
exhaustively or by Optuna (`search`) on a local process pool or a Dask cluster (`parallel`), and written
out as points, the Pareto front, a design file per point and a page to read (`outputs`).

Its layer sits above the compiler and the reports (it compiles variants and compares their BoMs) and below
the CLI.
"""
