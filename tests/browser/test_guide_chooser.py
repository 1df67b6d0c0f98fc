"""The home page answers first, and the guide's chooser answers a reader's case: in
Chromium at 1440x900, from the site's own files, with no request leaving the site."""

from __future__ import annotations

import re

import pytest

from report.pages.guide import chooser_points

pytestmark = pytest.mark.browser

GUIDE = "analysis/guide/"


@pytest.fixture
def page(context, base_url):
    page = context.new_page()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.errors, page.requests = [], []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("request", lambda request: page.requests.append(request.url))
    yield page
    page.close()


def choose(page, base_url, device_kind: str, **fields: str) -> str:
    page.goto(base_url + GUIDE, wait_until="networkidle")
    select = page.locator("#chooser select[name=device]")
    options = select.locator("option").all_text_contents()
    wanted = [o for o in options if o.endswith(f"({device_kind})")]
    assert wanted, f"no {device_kind} device among the chooser's options: {options}"
    select.select_option(label=wanted[0])
    for name, value in fields.items():
        field = page.locator(f"#chooser [name={name}]")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    return page.locator("#chooser .atlas-chooser-answer").inner_text()


def picked(page, guide: dict) -> tuple[dict, list]:
    """The chooser form's values, and the point of its data they pick."""
    form = page.evaluate("""() => Object.fromEntries(['device', 'workload', 'batch', 'dtype', 'calls']
        .map((n) => [n, document.querySelector(`#chooser [name=${n}]`).value]))""")
    (point,) = [p for p in chooser_points(guide) if p[0] == form["device"]
                and p[1] == form["workload"] and ("null" if p[2] is None else str(p[2])) == form["batch"]
                and p[3] == form["dtype"]]
    return form, point


@pytest.mark.parametrize("kind", ["cuda", "cpu"])
def test_chooser_answers_with_the_point_of_its_data_and_links_to_the_row(page, base_url, kind):
    answer = choose(page, base_url, kind, work="inference", shapes="fixed", calls="1000000")
    head = answer.splitlines()[0]
    guide = page.evaluate("() => fetch('../guide-data.json').then((r) => r.json())")
    form, point = picked(page, guide)
    step = guide["calls"].index(int(form["calls"]))
    expected = dict(zip(guide["fields"], point[4][step], strict=True))
    assert head.startswith(expected["mode"] + " ") or head.startswith(expected["mode"] + "—"), (
        head, expected)
    if expected["mode"] != "eager":
        assert f"pays back in {expected['pays_back']} calls" in head, (head, expected)
    link = page.locator("#chooser .atlas-chooser-conditions a")
    assert link.get_attribute("href") == f"../../workloads/{form['workload']}/"
    assert not page.errors, page.errors


def _pickable(info: dict) -> bool:
    """Whether the chooser lists a fixed-shape workload's points: a model (not a
    microbenchmark, not a matrix size), measured at one shape per case. Varying shapes are
    answered from the shape streams (`test_varying_shapes_answer_from_the_shape_streams`)."""
    return (info["family"] not in ("launch-overhead", "warmup") and info["axis"] != "n"
            and not info["varying"])


def test_chooser_says_not_measured_where_nothing_matches(page, base_url):
    answer = choose(page, base_url, "cpu", work="training", shapes="varying")
    assert answer.startswith("Not measured"), answer


def test_varying_shapes_answer_from_the_shape_streams(page, base_url):
    """Shapes that vary are answered with the varying-shapes page's answer for the stream
    (field for field, report/shapes/data.py `answer`), or "not measured" with a link to that
    page where no stream was measured in the environment."""
    page.goto(base_url + GUIDE, wait_until="networkidle")
    guide = page.evaluate("() => fetch('../guide-data.json').then((r) => r.json())")
    for env in guide["environments"]:
        page.locator("#chooser select[name=device]").select_option(env["id"])
        page.locator("#chooser select[name=work]").select_option("inference")
        page.locator("#chooser select[name=shapes]").select_option("varying")
        answer = page.locator("#chooser .atlas-chooser-answer")
        assert not page.locator("#chooser select[name=calls]").is_visible()
        mine = [s for s in guide["streams"] if s[0] == env["id"]]
        if not mine:
            assert answer.inner_text().startswith("Not measured"), answer.inner_text()
            assert answer.locator("a").get_attribute("href") == "../shapes/"
            continue
        form = page.evaluate("""() => Object.fromEntries(['workload', 'batch', 'dtype']
            .map((n) => [n, document.querySelector(`#chooser [name=${n}]`).value]))""")
        (stream,) = [s for s in mine if s[1] == form["workload"] and s[3] == form["dtype"]
                     and ("null" if s[2] is None else str(s[2])) == form["batch"]]
        said, expected = answer.inner_text(), stream[5]
        for field in ("soonest", "soonest_total", "eager_total", "steadiest", "steadiest_p99",
                      "eager_p99", "pays_off", "memory", "inputs"):
            if expected[field] is not None:
                assert expected[field] in said, (field, said, expected)
    assert not page.errors, page.errors


def test_guide_page_loads_nothing_from_outside_the_site_and_no_mermaid(page, base_url):
    page.goto(base_url + GUIDE, wait_until="networkidle")
    # The one request out is the theme's star count for repo_url (it fails quietly offline).
    outside = [url for url in page.requests if not url.startswith(base_url)
               and not url.startswith(("data:", "blob:", "https://api.github.com/repos/"))]
    assert not outside, outside
    assert not any("mermaid" in url for url in page.requests)


def test_every_quick_answer_is_within_two_screens_and_links_to_evidence(page, base_url):
    page.goto(base_url, wait_until="networkidle")
    answers = page.locator(".atlas-answers p:has(strong)")
    questions = [i for i in range(answers.count())
                 if answers.nth(i).inner_text().split(".")[0].strip().isdigit()]
    assert 8 <= len(questions) <= 12, answers.all_inner_texts()
    for i in questions:
        block = answers.nth(i)
        box = block.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 2 * 900, block.inner_text()
        assert block.locator("a").count() >= 1, f"no evidence link: {block.inner_text()}"


# Every element of the answers that holds text of its own, with its font size and how far
# it reaches past the right edge of the answers block; and how far the block itself scrolls.
_ANSWERS_LAYOUT_JS = """
() => {
  const block = document.querySelector(".atlas-answers");
  if (!block) return null;
  const right = block.getBoundingClientRect().right;
  const texts = [...block.querySelectorAll("*")].filter((e) => [...e.childNodes].some(
    (n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim()));
  return {
    scroll: block.scrollWidth - block.clientWidth,
    viewport: document.documentElement.clientWidth,
    right: right,
    texts: texts.map((e) => ({text: e.textContent.trim().slice(0, 60),
                              px: parseFloat(getComputedStyle(e).fontSize),
                              past: e.getBoundingClientRect().right - right})),
  };
}
"""


def test_quick_answers_fit_a_phone_and_are_readable(context, base_url):
    page = context.new_page()
    try:
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(base_url, wait_until="load")
        layout = page.evaluate(_ANSWERS_LAYOUT_JS)
    finally:
        page.close()
    assert layout is not None, "the home page has no .atlas-answers block"
    assert layout["right"] <= layout["viewport"], layout["right"]
    assert layout["scroll"] <= 0, f"the answers scroll sideways by {layout['scroll']} px"
    past = [t for t in layout["texts"] if t["past"] > 1]
    assert not past, f"text reaching past the answers' right edge: {past}"
    small = [t for t in layout["texts"] if t["px"] < 12]
    assert not small, f"answer text under 12 px on a phone: {small}"


# Each table cell holding one token (no space, no hyphen, after which a line may break):
# on how many lines its text is laid out.
_ONE_TOKEN_CELLS_JS = """
() => [...document.querySelectorAll("article table:not([class]) td")]
  .filter((td) => td.textContent.trim() && !/[\\s-]/.test(td.textContent.trim()))
  .map((td) => {
    const range = document.createRange();
    range.selectNodeContents(td);
    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
    return {text: td.textContent.trim(), lines: tops.size};
  })
"""


def test_a_phone_keeps_numbers_and_words_in_table_cells_whole(context, base_url):
    """A phone scrolls a wide table sideways (its first column stays put), so no cell needs
    to split a figure such as 2.81× or a verdict such as "depends" across two lines."""
    page = context.new_page()
    cells = []
    try:
        page.set_viewport_size({"width": 390, "height": 844})
        for path in ("analysis/models/", "analysis/claims/seed-002/"):
            page.goto(base_url + path, wait_until="load")
            cells += page.evaluate(_ONE_TOKEN_CELLS_JS)
    finally:
        page.close()
    assert len(cells) > 50 and "depends" in {c["text"] for c in cells}, len(cells)
    split = [c["text"] for c in cells if c["lines"] > 1]
    assert not split, f"cells split over lines on a phone: {split[:10]}"


def _host_point(guide: dict):
    """A point of the chooser's data on a GPU whose answer at some calls is host-dependent
    with a host model, reachable from the form."""
    backends = {e["id"]: e["backend"] for e in guide["environments"]}
    for env, workload, batch, dtype, by_calls, *hosts in chooser_points(guide):
        info = guide["workloads"][workload]
        if (not hosts or backends[env] != "cuda" or not _pickable(info)):
            continue
        for step, values in enumerate(by_calls):
            answer = dict(zip(guide["fields"], values or [], strict=False))
            terms = hosts[0].get(answer.get("mode"))
            if answer.get("host_dependent") and terms:
                model = dict(zip(guide["host_fields"], terms, strict=True))
                return env, workload, batch, dtype, guide["calls"][step], info, answer["mode"], model
    return None


def _bench_host(device: str, probe_us: float) -> list[dict]:
    """What `python -m bench host --json` predicts for `device` at `probe_us` from the results
    the site was built from."""
    import json
    import subprocess
    import sys

    from tests.fixtures import ROOT

    done = subprocess.run([sys.executable, "-m", "bench", "host", "--results", "results",
                           "--device", device, "--op-us", str(probe_us), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout)["cases"]


def test_a_host_dependent_answer_is_predicted_for_the_readers_host(page, base_url):
    """At the median measured host and inside the fitted probes, the chooser prints what
    `python -m bench host` predicts for the same case and host cost (issue 92); outside
    them it predicts nothing."""
    page.goto(base_url + GUIDE, wait_until="networkidle")
    guide = page.evaluate("() => fetch('../guide-data.json').then((r) => r.json())")
    found = _host_point(guide)
    assert found, "no host-dependent answer with a host model in the chooser's data"
    env, workload, batch, dtype, calls, info, mode, model = found
    form = "#chooser [name={}]".format
    page.locator(form("device")).select_option(env)
    page.locator(form("work")).select_option("training" if info["training"] else "inference")
    page.locator(form("shapes")).select_option("fixed")
    if page.locator(form("dtype")).is_visible():
        page.locator(form("dtype")).select_option(dtype)
    page.locator(form("workload")).select_option(workload)
    page.locator(form("batch")).select_option("null" if batch is None else str(batch))
    page.locator(form("calls")).select_option(str(calls))
    probe = page.locator(form("probe"))
    # Every GPU type with host models is published at a reference host: the box starts there.
    assert guide["reference_probe_us"].get(env) is not None, env
    start = float(f"{_model_start(guide, env, model):.1f}")
    assert probe.input_value() == f"{start:.1f}"
    label = next(e["label"] for e in guide["environments"] if e["id"] == env)
    device = label.split(" · ")[0]

    def said() -> str:
        return page.locator("#chooser .atlas-chooser-host").inner_text()

    def expected(probe_us: float) -> str:
        (case,) = [c for c in _bench_host(device, probe_us) if (
            c["env_id"], c["workload"], c["batch_size"], c["dtype"], c["mode"]) == (
            env, workload, batch, dtype, mode)]
        assert case["status"] == "predicted", case
        high = "no upper bound" if case["high"] is None else f"{case['high']:.2f}×"
        return f"{probe_us:.1f} µs: {case['speedup']:.2f}× ({case['low']:.2f}×–{high})"

    assert expected(start) in said(), said()
    inside = round((model["probe_lo_us"] + model["probe_hi_us"]) / 2, 1)
    probe.fill(str(inside))
    assert expected(inside) in said(), said()
    probe.fill(str(round(model["probe_hi_us"] + 5, 1)))
    assert "outside the measured range" in said() and "×" not in said(), said()
    assert not page.errors, page.errors


def test_the_chooser_writes_text_only_as_text():
    """Chooser text goes into the page by textContent, never parsed as HTML."""
    from tests.fixtures import ROOT

    script = (ROOT / "docs" / "javascripts" / "chooser.js").read_text("utf-8")
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "outerHTML" not in script and "document.write" not in script


# For each (environment, workload, dtype) the chooser can be asked for: picks the workload
# and dtype where they were measured, then moves to the environment, as a reader who keeps
# their model and changes the machine does; reads the form and the answer.
_EVERY_COMBINATION_JS = """
async (combos) => {
  const form = document.querySelector("#chooser form");
  const set = (name, value) => {
    const field = form.elements[name];
    field.value = value;
    field.dispatchEvent(new Event("change", {bubbles: true}));
  };
  const seen = [];
  for (const c of combos) {
    set("device", c.source);
    set("work", c.work);
    set("shapes", c.shapes);
    set("dtype", c.dtype);
    set("workload", c.workload);
    set("device", c.env);
    const answer = document.querySelector("#chooser .atlas-chooser-answer");
    seen.push({...c, text: answer.innerText,
               form: Object.fromEntries(["workload", "batch", "dtype"].map(
                 (n) => [n, form.elements[n].value]))});
  }
  return seen;
}
"""


def test_the_chooser_answers_for_the_model_picked_or_says_it_is_not_measured(page, base_url):
    """Every environment x dtype x model: the answer is for the model and dtype picked, or
    its first line says they were not measured there and names the case answered instead;
    never another model in silence (issue 93: vit-base16 in float32 on an H200 answered
    with conv2d-block)."""
    page.goto(base_url + GUIDE, wait_until="networkidle")
    page.wait_for_selector("#chooser .atlas-chooser-result")
    guide = page.evaluate("() => fetch('../guide-data.json').then((r) => r.json())")
    pickable = {w for w, info in guide["workloads"].items() if _pickable(info)}
    measured = {(p[0], p[1], p[3]) for p in guide["points"] if p[1] in pickable}
    envs = [e["id"] for e in guide["environments"]]
    combos = []
    for workload, dtype in sorted({(w, d) for _, w, d in measured}):
        info = guide["workloads"][workload]
        source = next(e for e in envs if (e, workload, dtype) in measured)
        combos += [{"env": env, "source": source, "workload": workload, "dtype": dtype,
                    "work": "training" if info["training"] else "inference",
                    "shapes": "fixed"} for env in envs]
    seen = page.evaluate(_EVERY_COMBINATION_JS, combos)
    here, elsewhere = 0, 0
    for s in seen:
        first = s["text"].splitlines()[0]
        label = next(e["label"] for e in guide["environments"] if e["id"] == s["env"])
        if (s["env"], s["workload"], s["dtype"]) in measured:
            assert (s["form"]["workload"], s["form"]["dtype"]) == (s["workload"], s["dtype"]), s
            assert not first.startswith("Not measured"), s
            assert f"{s['workload']} at batch " in s["text"] and f", {s['dtype']}. " in s["text"], s
            here += 1
        else:
            assert first.startswith(f"Not measured here: {s['workload']} at batch "), s
            assert f" in {s['dtype']} on {label}." in first, s
            if "The nearest measured case" in first:
                nearest = first.split("answered below: ")[1]
                assert nearest.startswith(f"{s['form']['workload']} at batch "), s
                assert nearest.endswith(f" in {s['form']['dtype']}."), s
            elsewhere += 1
    assert here >= 50 and elsewhere >= 1, (here, elsewhere)
    assert not page.errors, page.errors


def _untyped_probe(guide: dict, env: str, answer: dict, models: dict) -> float:
    """What the host box holds before the reader types: the median measured host; for a
    host-dependent answer with a host model, `_model_start`."""
    terms = models.get(answer["mode"]) if answer["host_dependent"] else None
    if terms is None:
        return guide["probe_us"]
    return _model_start(guide, env, dict(zip(guide["host_fields"], terms, strict=True)))


def _model_start(guide: dict, env: str, model: dict) -> float:
    """Where a host model's answer starts the box: its environment's reference host (its GPU
    type's) where it lies inside the model's probes, else the model's median host."""
    reference = guide["reference_probe_us"].get(env)
    if reference is not None and model["probe_lo_us"] <= reference <= model["probe_hi_us"]:
        return reference
    return model["probe_median_us"]


def test_the_chooser_opens_at_the_pages_defaults_with_a_visible_filled_host_box(page, base_url):
    page.goto(base_url + GUIDE, wait_until="networkidle")
    page.wait_for_selector("#chooser .atlas-chooser-result")
    guide = page.evaluate("() => fetch('../guide-data.json').then((r) => r.json())")
    calls = page.locator("#chooser [name=calls]")
    assert calls.input_value() == "100000"
    assert "200" in calls.locator("option").all_text_contents()
    assert page.locator("#chooser [name=dtype]").input_value() == "float32"
    _, point = picked(page, guide)
    answer = dict(zip(guide["fields"], point[4][guide["calls"].index(100_000)], strict=True))
    probe = page.locator("#chooser [name=probe]")
    assert probe.input_value() == f"{_untyped_probe(guide, point[0], answer, (point[5:] or [{}])[0]):.1f}"
    border = probe.evaluate("e => parseFloat(getComputedStyle(e).borderTopWidth)")
    assert border > 0, "the host box has no border"
    # Every environment a reader picks from has a name, not a hash.
    names = page.locator("#chooser [name=device] option").all_text_contents()
    hashed = [n for n in names if re.search(r"\b[0-9a-f]{12}\b", n)]
    assert not hashed, hashed


def test_the_chooser_prints_the_guides_figures_digit_for_digit(page, base_url):
    """At every point of the default environment, the speedup and lead the chooser prints
    are the JSON's figures at the pages' precision (formatting.times and percent)."""
    page.goto(base_url + GUIDE, wait_until="networkidle")
    page.wait_for_selector("#chooser .atlas-chooser-result")
    head = page.locator("#chooser .atlas-chooser-result").inner_text()
    guide = page.evaluate("() => fetch('../guide-data.json').then((r) => r.json())")
    _, point = picked(page, guide)
    answer = dict(zip(guide["fields"], point[4][guide["calls"].index(100_000)], strict=True))
    if answer["mode"] != "eager":
        assert f"{answer['speedup']:.2f}× faster than eager" in head, (head, answer)
    if answer["mode_runner_up"] and not answer["tie"]:
        assert f"a lead of {100 * answer['margin']:.1f}%" in head, (head, answer)


# For each case: puts the form on its point as a reader picks it (environment, work, shapes,
# dtype, model, batch, calls) and reads back the form, the answer's first line and whether
# a host note follows.
_EVERY_POINT_JS = """
async (cases) => {
  const form = document.querySelector("#chooser form");
  const names = ["device", "work", "shapes", "dtype", "workload", "batch", "calls"];
  return cases.map((c) => {
    names.forEach((name) => {
      form.elements[name].value = c[name];
      form.elements[name].dispatchEvent(new Event("change", {bubbles: true}));
    });
    const head = document.querySelector("#chooser .atlas-chooser-result");
    return {form: Object.fromEntries(names.map((n) => [n, form.elements[n].value])),
            head: head ? head.innerText : "",
            host: document.querySelector("#chooser .atlas-chooser-host") !== null};
  });
}
"""


def _said_of(answer: dict, calls: int) -> list[str]:
    """What the chooser's first line says of `answer` at `calls`, field by field: how it
    begins, then the parts it holds."""
    def paid_in(count: str) -> str:
        return f"{count} call{'' if count == '1' else 's'}"

    def cost(mode: str, suffix: str = "") -> str:
        return ("nothing to compile" if mode == "eager" else f"{answer['cold_compile_s' + suffix]} "
                f"to compile, {paid_in(answer['pays_back' + suffix])} to pay back")

    mode, runner_up = answer["mode"], answer["mode_runner_up"]
    kind = (" (torch.compile)" if answer["compiling"] else
            " (a hand-captured CUDA graph, no compiling)" if answer["cuda_graphs"] else "")
    said = [f"{mode}{kind} — "]
    if mode == "eager":
        said.append(f"within {calls:,} calls and runs measurably faster than eager.")
    else:
        plural = "" if answer["processes"] == 1 else "es"
        said += [f"{answer['speedup']:.2f}× faster than eager ({answer['speedup_lo']:.2f}×–"
                 f"{answer['speedup_hi']:.2f}×, {answer['processes']} {answer['timing']} "
                 f"process{plural}); ", f"it pays back in {paid_in(answer['pays_back'])}."]
    if runner_up:
        said.append(f"Runner-up: {runner_up}, {answer['speedup_runner_up']:.2f}×; ")
        said.append(f"so the cheaper mode is named first: {mode}, {cost(mode)}; "
                    f"{runner_up}, {cost(runner_up, '_runner_up')}." if answer["tie"]
                    else f"a lead of {100 * answer['margin']:.1f}%.")
    return said


def test_the_chooser_answers_every_point_at_every_calls_with_its_datas_answer(page, base_url):
    """At every point a reader can pick and every calls per process, the chooser shows that
    point and prints each field of its answer as chooser_points reads the data (the mirror
    of chooser.js's reading): mode, kind, speedup and band, processes, break-even,
    runner-up, tie or lead, compile costs, and a host note exactly where host-dependent."""
    page.goto(base_url + GUIDE, wait_until="networkidle")
    page.wait_for_selector("#chooser .atlas-chooser-result")
    guide = page.evaluate("() => fetch('../guide-data.json').then((r) => r.json())")
    cases, expected = [], []
    for env, workload, batch, dtype, by_calls, *_ in chooser_points(guide):
        info = guide["workloads"][workload]
        if not _pickable(info):
            continue
        for calls, values in zip(guide["calls"], by_calls, strict=True):
            cases.append({"device": env, "work": "training" if info["training"] else "inference",
                          "shapes": "fixed", "dtype": dtype,
                          "workload": workload, "batch": "null" if batch is None else str(batch),
                          "calls": str(calls)})
            expected.append(dict(zip(guide["fields"], values, strict=True)))
    assert len(cases) >= 600, len(cases)
    seen = page.evaluate(_EVERY_POINT_JS, cases)
    for case, answer, shown in zip(cases, expected, seen, strict=True):
        assert shown["form"] == case, (case, shown["form"])
        head, said = shown["head"], _said_of(answer, int(case["calls"]))
        assert head.startswith(said[0]), (case, head, said)
        missing = [part for part in said[1:] if part not in head]
        assert not missing, (case, head, missing)
        assert shown["host"] == bool(answer["host_dependent"]), (case, answer)
    assert not page.errors, page.errors
