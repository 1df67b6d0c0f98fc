// The guide's chooser: the reader's environment, work, workload, batch, calls per process,
// shapes and dtype select one measured point of analysis/guide-data.json, whose answers
// report/pages/guide.py computed with analysis.choose, the rule the quick answers and the
// pages use. Nothing is computed here: every figure shown is a field of that file.
(function () {
  "use strict";
  const root = document.getElementById("chooser");
  if (!root) return;
  const form = root.querySelector("form");
  const out = root.querySelector(".atlas-chooser-answer");
  const skipped = new Set(["launch-overhead", "warmup"]); // microbenchmarks, not models

  function times(x) { return x.toFixed(2) + "×"; }
  function count(x) { return x === "never" ? "never" : Number(x).toLocaleString("en"); }
  function text(tag, content, attrs) {
    const node = document.createElement(tag);
    if (content !== undefined) node.textContent = content;
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    return node;
  }
  function fill(select, values, label) {
    const keep = select.value;
    select.replaceChildren(...values.map((v) => text("option", label(v), {value: String(v)})));
    if (values.map(String).includes(keep)) select.value = keep;
  }
  function kind(answer) {
    if (!answer.compiling && answer.cuda_graphs) return " (a hand-captured CUDA graph, no compiling)";
    return answer.compiling ? " (torch.compile)" : "";
  }

  function setup(guide) {
    const el = form.elements;
    const named = (values) => Object.fromEntries(guide.fields.map((f, i) => [f, values[i]]));
    const points = guide.points.map(([env, workload, batch, dtype, answers]) =>
      ({env, workload, batch, dtype, answers: answers.map((a) => a && named(a))}));
    fill(el.device, guide.environments.map((e) => e.id), (id) => {
      const env = guide.environments.find((e) => e.id === id);
      return `${env.label} (${env.backend})`;
    });
    fill(el.calls, guide.calls, count);
    el.calls.value = String(guide.calls[guide.calls.length - 1]);
    const matching = () => points.filter((p) => {
      const w = guide.workloads[p.workload];
      return p.env === el.device.value && w && !skipped.has(w.family) && w.axis !== "n"
        && w.training === (el.work.value === "training") && w.varying === (el.shapes.value === "varying");
    });
    const refresh = () => {
      const found = matching();
      const dtypes = [...new Set(found.map((p) => p.dtype))].sort();
      fill(el.dtype, dtypes, (d) => d);
      el.dtype.closest("label").hidden = dtypes.length < 2;
      const ofDtype = found.filter((p) => p.dtype === el.dtype.value);
      const byKind = (a, b) => guide.workloads[a].kind.localeCompare(guide.workloads[b].kind);
      fill(el.workload, [...new Set(ofDtype.map((p) => p.workload))].sort(byKind),
           (w) => `${guide.workloads[w].kind}: ${w}`);
      const batches = ofDtype.filter((p) => p.workload === el.workload.value).map((p) => p.batch);
      fill(el.batch, batches, (b) => (b === null ? "—" : String(b)));
      const point = ofDtype.find((p) => p.workload === el.workload.value
                                   && String(p.batch) === el.batch.value);
      show(point, guide);
    };
    form.addEventListener("change", refresh);
    refresh();
  }

  function show(point, guide) {
    out.replaceChildren();
    const el = form.elements;
    if (!point) {
      out.append(text("p", `Not measured: no ${el.work.value} workload with ${el.shapes.value} `
                           + "shapes was measured in this environment."));
      return;
    }
    const step = guide.calls.indexOf(Number(el.calls.value));
    const a = point.answers[step];
    const head = text("p", undefined, {class: "atlas-chooser-result"});
    head.append(text("strong", a.mode), kind(a));
    if (a.mode === "eager") {
      head.append(" — no other mode pays back its compile within "
                  + `${count(guide.calls[step])} calls and runs faster than eager.`);
    } else {
      head.append(` — ${times(a.speedup)} faster than eager (${times(a.speedup_lo)}–`
        + `${times(a.speedup_hi)}, ${a.processes} ${a.timing} process${a.processes === 1 ? "" : "es"}); `
        + `it pays back its first call after ${count(a.cold_calls)} calls.`);
    }
    if (a.mode_runner_up) {
      head.append(` Runner-up: ${a.mode_runner_up}, ${times(a.speedup_runner_up)}; `
        + (a.tie ? "a tie: the lead is inside the spread between processes."
                 : `a lead of ${(a.margin * 100).toFixed(1)}%.`));
    }
    if (a.host_dependent) head.append(" This gain depends on the host: it grows on a slower CPU.");
    out.append(head);
    const env = guide.environments.find((e) => e.id === point.env);
    const conditions = text("p", `${env.label}; ${el.work.value}, ${el.shapes.value} shapes, `
      + `${point.workload} at batch ${point.batch === null ? "—" : point.batch}, ${point.dtype}. `,
      {class: "atlas-chooser-conditions"});
    const about = guide.workloads[point.workload].description;
    if (about) conditions.append(`${point.workload}: ${about}. `);
    conditions.append(text("a", "The row on the workload's page",
                           {href: `../../workloads/${point.workload}/`}), ".");
    out.append(conditions);
  }

  fetch(root.dataset.guide)
    .then((r) => { if (!r.ok) throw new Error(`${root.dataset.guide}: ${r.status}`); return r.json(); })
    .then(setup)
    .catch((error) => { out.textContent = `The measured answers could not be loaded (${error.message}).`; });
})();
