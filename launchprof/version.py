"""launchprof's version, in a module of its own: run files, profiles and reports record it,
and reading it from the package itself would make every such writer depend on the public
API that ``launchprof/__init__.py`` exports."""

__version__ = "0.1.0"
