"""The suite's own rules (tests/conftest.py): tests that need the real traces skip without them,
saying so, except where HPCSCHED_REQUIRE_TRACES is set (.ci/run, when the folder is there),
where a missing trace is a failure (issue 25)."""

from __future__ import annotations

import pytest

from tests.conftest import require_traces


def test_missing_traces_skip_unless_required(tmp_path, monkeypatch):
    missing = tmp_path / "shared" / "traces"
    monkeypatch.delenv("HPCSCHED_REQUIRE_TRACES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="real traces not found"):
        require_traces(missing)
    monkeypatch.setenv("HPCSCHED_REQUIRE_TRACES", "1")
    with pytest.raises(pytest.fail.Exception, match="HPCSCHED_REQUIRE_TRACES is set"):
        require_traces(missing)
    missing.mkdir(parents=True)
    assert require_traces(missing) == missing


def test_the_generated_markovian_workload_is_the_papers(markovian_trace, traces_dir):
    """Tests of the Markovian workload use the generated file instead of the traces folder's:
    the same jobs (the same JSON once decompressed)."""
    import gzip

    bundled = traces_dir / "snf-icon-paper" / "generated-markovian-3000.json.gz"
    assert gzip.decompress(markovian_trace.read_bytes()) == gzip.decompress(bundled.read_bytes())
