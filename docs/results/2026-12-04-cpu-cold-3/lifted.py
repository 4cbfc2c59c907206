"""devicelint check with the component budgets lifted (wall time, memory): results independent of the load."""
import sys
from devicelint import cli, settings
from devicelint.budget import Limits
settings.Settings.limits = lambda self: Limits(self.max_component_steps, None, None, self.max_function_steps)
sys.exit(cli.main(sys.argv[1:]))
