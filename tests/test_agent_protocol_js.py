"""The Agent Protocol driven by LangGraph's JS SDK (`@langchain/langgraph-sdk`'s Client) in node, against
a real runner on loopback. Skipped where node or the package is absent (.ci/run installs the package with
npm into .cache/js-sdk; DEEPRESEARCH_JS_SDK_DIR names another folder holding its node_modules)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from config import Settings
from peers import serve_app
from runner import create_app
from tests.conftest import Servers
from tests.test_agent_protocol import QUESTION

ROOT = Path(__file__).resolve().parent.parent
SDK_DIR = Path(os.environ.get("DEEPRESEARCH_JS_SDK_DIR", ROOT / ".cache" / "js-sdk"))
ENTRY = SDK_DIR / "node_modules" / "@langchain" / "langgraph-sdk" / "dist" / "index.js"
SCRIPT = ROOT / "tests" / "js" / "agent_protocol_client.mjs"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not ENTRY.is_file(),
    reason=f"node or the JS SDK absent: npm install --prefix {SDK_DIR} @langchain/langgraph-sdk@1",
)


def test_the_js_sdk_streams_a_run_reads_its_state_and_cancels_one(servers: Servers, tmp_path: Path) -> None:
    settings: Settings = servers.settings(tmp_path, llm=True)
    with serve_app(create_app(settings), lifespan="on") as url:
        done = subprocess.run(
            ["node", str(SCRIPT), str(ENTRY), url, QUESTION],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["assistants"] == ["deepresearch"]
    assert result["first_event"] == "metadata" and result["last_event"] == "end"
    assert result["updates"][0] == "plan_research" and result["updates"][-1] == "write_report"
    assert result["custom"] > 0 and result["verified"]
    assert set(result["updates"]) <= set(result["stages_in_history"])
    assert result["statuses"] == ["success"]
    assert result["cancelled"] == "interrupted"
