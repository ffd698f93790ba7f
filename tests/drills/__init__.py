"""The reliability drills (`make drills`): run with PYTHONPATH=tests, e.g.
`python -m drills.run_all` or `python -m drills.crash --cycles 5`."""
