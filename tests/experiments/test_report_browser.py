"""The report as a reader's browser shows it: headless Chromium loads every image and table."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hpcsched.comparison import compare
from hpcsched.workload import generate

CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no headless Chromium (Debian package 'chromium'; .ci/run installs it)",
)

# Runs in the page once everything has loaded and writes what it found into the DOM.
PROBE = """
<script>
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const result = {
    images: images.length,
    loaded: images.filter(i => i.complete && i.naturalWidth > 0).length,
    tables: document.querySelectorAll("table").length,
    rows: document.querySelectorAll("tbody tr").length,
    headings: Array.from(document.querySelectorAll("h2")).map(h => h.textContent),
  };
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
});
</script>
"""


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_report_renders_in_chromium_with_every_image_loaded(tmp_path):
    workload = generate.markovian(300, 64, target_util=0.6, seed=11)
    comparison = compare(workload, ["fcfs-b+ipm", "snf-icon"], platform="AOBA-64", processes=1)
    report = comparison.report(tmp_path / "report.html")
    probed = tmp_path / "probed.html"
    page = Path(report).read_text(encoding="utf-8")
    probed.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")

    dom = chromium("--virtual-time-budget=10000", "--dump-dom", probed.as_uri()).stdout
    found = json.loads(
        re.search(r'<pre id="probe">(.*?)</pre>', dom).group(1).replace("&quot;", '"')
    )
    assert found["images"] >= 6 and found["loaded"] == found["images"]
    assert found["tables"] >= 4 and found["rows"] >= 8
    assert {"Inputs", "Summary", "Energy", "Plots"} <= set(found["headings"])

    # and it paints something: a screenshot that is not a blank page
    from PIL import Image

    shot = tmp_path / "shot.png"
    chromium(
        "--window-size=1100,3000",
        "--hide-scrollbars",
        f"--screenshot={shot}",
        Path(report).as_uri(),
    )
    with Image.open(shot) as image:
        colours = image.convert("L").getextrema()
    assert colours[0] < 100 < colours[1]  # dark text and figures on a light page
