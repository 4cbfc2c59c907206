"""Library models: what the engine knows of torch, numpy, argparse, copy and the frameworks that call a
program's functions. The engine reaches them only through the hooks of :class:`.base.LibraryModel`; the
registry (:mod:`.registry`) lists them."""
