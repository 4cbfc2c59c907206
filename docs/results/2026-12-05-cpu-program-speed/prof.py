import cProfile, sys, io, contextlib
from devicelint import cli, settings
from devicelint.budget import Limits
settings.Settings.limits = lambda self: Limits(self.max_component_steps, None, self.max_worker_memory, self.max_function_steps)
cli._cpus = lambda: 1
out = sys.argv[1]
argv = sys.argv[2:]
pr = cProfile.Profile()
pr.enable()
try:
    with contextlib.redirect_stdout(io.StringIO()):
        cli.main(argv)
finally:
    pr.disable()
    pr.dump_stats(out)
