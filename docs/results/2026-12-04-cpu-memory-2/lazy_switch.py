import sys
from devicelint import lazy_bodies
from devicelint.cli import main
if sys.argv[1] == "off":
    lazy_bodies.strip = lambda source: 0
try:
    main(sys.argv[2:])
except SystemExit:
    pass
