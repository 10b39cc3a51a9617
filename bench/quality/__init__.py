"""Quality harness: research fixed question sets over documentation corpora with the real engine (corpus
only, no web) and score the reports against gold pages and gold facts, per corpus and per split.

    python -m bench.quality --home ~/.cache/dr-quality          # every set; the indexes kept between runs
    python -m bench.quality --corpus-set apache --split dev     # one corpus, the questions to tune on
    python -m bench.quality --check                             # exit 1 on a held-out regression

Modules: corpora (question sets, their corpora and splits), scoring (one report's figures), grammar (the
sub-question check), runner (the engine's public entry), baseline (the pinned held-out figures), cli.
Documented in docs/quality.md."""
