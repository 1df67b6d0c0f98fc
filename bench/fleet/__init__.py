"""Fleet runs on Ray (`python -m bench --ray`): the launcher (launcher.py, the only module that
imports Ray), the node side of one task (task.py, standard library and bench.pool only), and
the plan on paper (`python -m bench.fleet.plan`). Nothing here is imported off the --ray path."""
