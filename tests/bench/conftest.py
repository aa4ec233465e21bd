"""The bench tests; their helpers are ``tests.helpers.benchutil`` and ``tests.helpers.bench_reference``,
their fixture programs tests/fixtures/bench/."""
