// The guide's chooser: the reader's environment, work, workload, batch, calls per process,
// shapes and dtype select one measured point of analysis/guide-data.json, whose answers
// report/pages/guide.py computed with analysis.choose, the rule the quick answers and the
// pages use. Every figure shown is a field of that file, except a host-dependent answer's
// prediction for the reader's host, which follows the formula of report/analysis/host.py's
// `columns` from the model terms the file carries (the same as bench/host/model.py SpeedupModel.at).
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

  // [low, fitted, high] of one side at probe p (µs): a fitted line with its prediction band,
  // or a device-bound figure with its range.
  function sideAt(side, p) {
    if (side[0] === "figure") return [side[2], side[1], side[3]];
    const [, intercept, slope, half, processes, mean, sxx] = side;
    const fitted = intercept + slope * p * 1e-6;
    const width = half * Math.sqrt(1 + 1 / processes + (p - mean) ** 2 / sxx);
    return [fitted - width, fitted, fitted + width];
  }
  // The predicted speedup over eager at probe p with its band, and how far p lies outside
  // the probes the model was fitted on (0 inside).
  function predict(model, p) {
    const outside = p > model.probe_hi_us ? p - model.probe_hi_us
      : p < model.probe_lo_us ? p - model.probe_lo_us : 0;
    const [baseLo, base, baseHi] = sideAt(model.base, p);
    const [modeLo, mode, modeHi] = sideAt(model.mode, p);
    const speedup = base / mode;
    if (model.ratio_sd !== null) {
      const [, , , , , mean, sxx] = model.base;
      const half = model.t * model.ratio_sd
        * Math.sqrt(1 + 1 / model.processes + (p - mean) ** 2 / sxx);
      return {low: speedup * Math.exp(-half), speedup, high: speedup * Math.exp(half), outside};
    }
    return {low: Math.max(baseLo, 0) / modeHi, speedup,
            high: modeLo > 0 ? baseHi / modeLo : Infinity, outside};
  }
  function micro(x) { return x.toFixed(1) + " µs"; }

  function setup(guide) {
    const el = form.elements;
    const named = (values) => Object.fromEntries(guide.fields.map((f, i) => [f, values[i]]));
    const hostNamed = (values) => Object.fromEntries(guide.host_fields.map((f, i) => [f, values[i]]));
    const points = guide.points.map(([env, workload, batch, dtype, answers, hosts]) =>
      ({env, workload, batch, dtype, answers: answers.map((a) => a && named(a)),
        hosts: Object.fromEntries(Object.entries(hosts || {}).map(([m, v]) => [m, hostNamed(v)]))}));
    // The reader's probe: pre-filled with the median measured host of the answer's model
    // until the reader types a value of their own.
    el.probe.addEventListener("input", () => { el.probe.dataset.typed = el.probe.value ? "1" : ""; });
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
    el.probe.addEventListener("input", refresh);
    refresh();
  }

  // A host-dependent answer as a prediction for the reader's host, or why there is none.
  function hostAnswer(model) {
    const probe = form.elements.probe;
    const note = text("p", "This gain depends on the host: it grows where the CPU issues "
                           + "kernels more slowly. ", {class: "atlas-chooser-host"});
    if (!model) {
      note.append("No host model was fitted for this mode here, so no prediction for your host.");
      return note;
    }
    if (!probe.dataset.typed) probe.value = model.probe_median_us.toFixed(1);
    const p = Number(probe.value);
    const range = `${micro(model.probe_lo_us)}–${micro(model.probe_hi_us)}`;
    if (!(p > 0)) {
      note.append(`Enter your host's eager op cost to predict; the hosts measured cost ${range}.`);
      return note;
    }
    const found = predict(model, p);
    if (found.outside !== 0) {
      note.append(`${micro(p)} is outside the measured range (${range}, `
        + `${micro(Math.abs(found.outside))} ${found.outside > 0 ? "above" : "below"}): not predicted.`);
      return note;
    }
    const high = Number.isFinite(found.high) ? times(found.high) : "no upper bound";
    note.append(`Predicted for a host whose eager op costs ${micro(p)}: ${times(found.speedup)} `
      + `(${times(found.low)}–${high}), from ${model.processes} paired processes on hosts at ${range}`
      + (Math.abs(p - model.probe_median_us) < 0.05 ? " (the median measured host)." : "."));
    return note;
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
        + `it pays back in ${a.pays_back} calls.`);
    }
    if (a.mode_runner_up) {
      head.append(` Runner-up: ${a.mode_runner_up}, ${times(a.speedup_runner_up)}; `
        + (a.tie ? "a tie: the lead is inside the spread between processes."
                 : `a lead of ${(a.margin * 100).toFixed(1)}%.`));
    }
    out.append(head);
    if (a.host_dependent) out.append(hostAnswer(point.hosts[a.mode]));
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
