"""Benchmarks of runtime_shim against raw torch and numpy; ``bench/run_all.sh`` runs them all."""
