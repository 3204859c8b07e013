"""Regenerating the ten SentEval probing tasks (Conneau et al. 2018, §3) from corpora the
user has: ``posharness build-probes senteval``. See docs/tasks/senteval_build.md.

Usage from Python (the command is a thin shell around these two calls)::

    from posharness.tasks.senteval.building.build import BuildRequest, build_senteval
    from posharness.tasks.senteval.building.write import write_senteval

    build = build_senteval(BuildRequest(snli=(Path("snli_1.0_dev.jsonl"),), seed=0))
    write_senteval(build, Path("probing"))

Modules, one job each: ``sources`` (the four readers) with ``trees``, ``conllu`` and
``text``; ``pool`` (deduplicated 5-28-token sentences and corpus counts); ``clauses`` with
``tree_clauses``/``ud_clauses`` (main-clause facts); one module per task group
(``surface_tasks``, ``syntax_tasks``, ``semantic_tasks``, ``somo``, ``coordinv``);
``balance`` (class-balanced seeded splits); ``build`` (the API) and ``write`` (the folder).
"""
