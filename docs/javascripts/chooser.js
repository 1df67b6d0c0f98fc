// The guide's chooser: the reader's environment, work, workload, batch, calls per process,
// shapes and dtype select one measured point of analysis/guide-data.json, whose answers
// report/pages/guide.py computed with analysis.choose, the rule the quick answers and the
// pages use. Where shapes vary, the answer is the varying-shapes page's for the stream
// picked (report/shapes/data.py `answer`, as text the page prints). Every figure shown is
// a field of that file: a host-dependent answer's
// prediction for the reader's host is looked up in the grid report/analysis/host.py `grid`
// computed from the host model (bench/host/model.py SpeedupModel.at, the one
// `python -m bench host` predicts from), never evaluated here.
(function () {
  "use strict";
  const root = document.getElementById("chooser");
  if (!root) return;
  const form = root.querySelector("form");
  const out = root.querySelector(".atlas-chooser-answer");
  const skipped = new Set(["launch-overhead", "warmup"]); // microbenchmarks, not models
  let guideReference = {}; // per environment, the reference host's probe (µs) where it has one

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

  // A grid's series (hundredths, each after the first the change from the one before; null
  // where a band has no top) as figures.
  function figures(changes) {
    let last = 0;
    return changes.map((change) => {
      if (change === null) return null;
      last += change;
      return last / 100;
    });
  }
  // The host cost the grid answers for at probe p (µs): p to a tenth of a µs, the box's step.
  function tenths(p) { return Math.round(p * 10); }
  // The predicted speedup over eager with its band at the grid's step nearest p (`probe`);
  // where the grid has no such step, how far it lies outside the probes the model was
  // fitted on (`outside`, below 0 under them) and no speedup.
  function predict(model, p) {
    const at = tenths(p);
    const i = at - tenths(model.first_us);
    if (model.first_us !== null && i >= 0 && i < model.speedup.length) {
      const high = model.high[i];
      return {low: model.low[i], speedup: model.speedup[i], high: high === null ? Infinity : high,
              probe: at / 10};
    }
    const probe = at / 10;
    return {outside: probe >= model.probe_hi_us ? probe - model.probe_hi_us : probe - model.probe_lo_us,
            probe};
  }
  function micro(x) { return x.toFixed(1) + " µs"; }

  // How far a measured point is from the reader's choice, smaller first: another model
  // (of another kind, farther still), another dtype, then the batches' distance in doublings.
  function distance(point, wanted, guide) {
    const kind = (w) => kindOf(guide, w);
    const model = point.workload === wanted.workload ? 0
      : kind(point.workload) === kind(wanted.workload) ? 1 : 2;
    const batch = point.batch === null || wanted.batch === null ? (point.batch === wanted.batch ? 0 : 1)
      : Math.abs(Math.log2(point.batch) - Math.log2(wanted.batch));
    return [model, point.dtype === wanted.dtype ? 0 : 1, batch];
  }
  function nearest(points, wanted, guide) {
    const key = (p) => distance(p, wanted, guide);
    return points.reduce((best, p) => {
      if (!best) return p;
      const [a, b] = [key(p), key(best)];
      const i = a.findIndex((v, j) => v !== b[j]);
      return i >= 0 && a[i] < b[i] ? p : best;
    }, null);
  }
  function batchText(b) { return b === null ? "—" : String(b); }
  // The kind of model a workload is like: a fixed-shape workload's, or a stream's.
  function kindOf(guide, w) {
    const info = guide.workloads[w];
    if (info) return info.kind;
    const stream = guide.streams.find((s) => s[1] === w);
    return stream ? stream[4] : undefined;
  }

  function setup(guide) {
    const el = form.elements;
    // Each distinct answer is kept once, as the index of its value of each field in that
    // field's table of values; a point names its answer at each calls by its index.
    const answers = guide.answers.map((coded) =>
      Object.fromEntries(guide.fields.map((f, i) => [f, guide.values[i][coded[i]]])));
    const hostNamed = (values) => {
      const model = Object.fromEntries(guide.host_fields.map((f, i) => [f, values[i]]));
      ["speedup", "low", "high"].forEach((name) => { model[name] = figures(model[name]); });
      return model;
    };
    const points = guide.points.map(([env, workload, batch, dtype, steps, hosts]) =>
      ({env, workload, batch, dtype, answers: steps.map((i) => (i === null ? null : answers[i])),
        hosts: Object.fromEntries(Object.entries(hosts || {}).map(([m, v]) => [m, hostNamed(v)]))}));
    const streams = guide.streams.map(([env, workload, batch, dtype, , answer]) =>
      ({env, workload, batch, dtype, stream: answer}));
    // The reader's probe: pre-filled with the median measured host until the reader types a
    // value; a host-dependent answer sets it to its environment's reference host.
    if (guide.probe_us !== null) el.probe.value = guide.probe_us.toFixed(1);
    el.probe.addEventListener("input", () => { el.probe.dataset.typed = el.probe.value ? "1" : ""; });
    fill(el.device, guide.environments.map((e) => e.id), (id) => {
      const env = guide.environments.find((e) => e.id === id);
      return `${env.label} (${env.backend})`;
    });
    fill(el.calls, guide.calls, count);
    el.calls.value = String(guide.calls_answered);
    // What the reader picked, kept while an environment that lacks it is shown: the selects
    // list only what the environment measured, and the answer says what was not.
    const wanted = {workload: null, batch: null, dtype: guide.dtype_answered};
    // Until the reader picks a model, each environment opens at its own first one; until
    // they pick a batch, each model opens at batch 1, or its smallest batch.
    let workloadPicked = false;
    let batchPicked = false;
    ["workload", "batch", "dtype"].forEach((name) => el[name].addEventListener("change", () => {
      wanted[name] = name === "batch" ? (el.batch.value === "null" ? null : Number(el.batch.value))
        : el[name].value;
      if (name === "workload") workloadPicked = true;
      if (name !== "dtype") batchPicked = name === "batch";
    }));
    // Varying shapes are answered from the shape streams alone (inference), as the
    // varying-shapes page answers them; fixed ones from the points of fixed-shape workloads.
    const varying = () => el.shapes.value === "varying";
    const matching = () => (varying()
      ? streams.filter((p) => p.env === el.device.value && el.work.value === "inference")
      : points.filter((p) => {
        const w = guide.workloads[p.workload];
        return p.env === el.device.value && w && !skipped.has(w.family) && w.axis !== "n"
          && w.training === (el.work.value === "training") && !w.varying;
      }));
    const refresh = () => {
      // The calls and the host's cost do not change a stream's answer: it covers the stream.
      el.calls.closest("label").hidden = varying();
      el.probe.closest("label").hidden = varying();
      const found = matching();
      if (!found.length) { show(null, guide, workloadPicked ? wanted : null); return; }
      if (!workloadPicked) {
        const own = found.filter((p) => p.dtype === wanted.dtype);
        wanted.workload = (own.length ? own : found).map((p) => p.workload).sort(byKind)[0];
      }
      if (!batchPicked) {
        const batches = found.filter((p) => p.workload === wanted.workload).map((p) => p.batch);
        wanted.batch = batches.includes(1) ? 1 : (batches.length ? batches[0] : null);
      }
      const exact = found.find((p) => p.workload === wanted.workload && p.batch === wanted.batch
                                     && p.dtype === wanted.dtype);
      const point = exact || nearest(found, wanted, guide);
      const dtypes = [...new Set(found.map((p) => p.dtype))].sort();
      fill(el.dtype, dtypes, (d) => d);
      el.dtype.value = point.dtype;
      el.dtype.closest("label").hidden = dtypes.length < 2 && dtypes[0] === wanted.dtype;
      const ofDtype = found.filter((p) => p.dtype === point.dtype);
      fill(el.workload, [...new Set(ofDtype.map((p) => p.workload))].sort(byKind),
           (w) => `${kindOf(guide, w)}: ${w}`);
      el.workload.value = point.workload;
      fill(el.batch, ofDtype.filter((p) => p.workload === point.workload).map((p) => p.batch), batchText);
      el.batch.value = String(point.batch);
      show(point, guide, exact ? null : wanted);
    };
    const byKind = (a, b) => kindOf(guide, a).localeCompare(kindOf(guide, b)) || a.localeCompare(b);
    form.addEventListener("change", refresh);
    el.probe.addEventListener("input", refresh);
    refresh();
  }

  // A host-dependent answer as a prediction for the reader's host, or why there is none.
  function hostAnswer(model, envId) {
    const probe = form.elements.probe;
    const note = text("p", "This gain depends on the host: it grows where the CPU issues "
                           + "kernels more slowly. ", {class: "atlas-chooser-host"});
    if (!model) {
      note.append("No host model was fitted for this mode here, so no prediction for your host.");
      return note;
    }
    // Untyped, the box takes this environment's reference host where it lies inside this
    // model's hosts, else the median host this model was measured on.
    const reference = guideReference[envId] ?? null;
    if (!probe.dataset.typed) {
      probe.value = (reference !== null && reference >= model.probe_lo_us && reference <= model.probe_hi_us
        ? reference : model.probe_median_us).toFixed(1);
    }
    const p = Number(probe.value);
    const range = `${micro(model.probe_lo_us)}–${micro(model.probe_hi_us)}`;
    if (!(p > 0)) {
      note.append(`Enter your host's eager op cost to predict; the hosts measured cost ${range}.`);
      return note;
    }
    const found = predict(model, p);
    if (found.speedup === undefined) {
      note.append(`${micro(found.probe)} is outside the measured range (${range}, `
        + `${micro(Math.abs(found.outside))} ${found.outside > 0 ? "above" : "below"}): not predicted.`);
      return note;
    }
    const high = Number.isFinite(found.high) ? times(found.high) : "no upper bound";
    note.append(`Predicted for a host whose eager op costs ${micro(found.probe)}: ${times(found.speedup)} `
      + `(${times(found.low)}–${high}), from ${model.processes} paired processes on hosts at ${range}`
      + (reference !== null && found.probe === tenths(reference) / 10
        ? " (the reference host of this GPU type's published figures)."
        : found.probe === tenths(model.probe_median_us) / 10 ? " (the median measured host)." : "."));
    return note;
  }

  function show(point, guide, wanted) {
    out.replaceChildren();
    const el = form.elements;
    const env = guide.environments.find((e) => e.id === (point ? point.env : el.device.value));
    const notHere = wanted ? `Not measured here: ${wanted.workload} at batch ${batchText(wanted.batch)} `
      + `in ${wanted.dtype} on ${env.label}.` : "Not measured:";
    if (!point) {
      out.append(text("p", `${notHere} No ${el.work.value} workload with ${el.shapes.value} `
                           + "shapes was measured in this environment."));
      if (el.shapes.value === "varying") out.append(shapesPage("What was measured is on the "));
      return;
    }
    if (wanted) {
      // The reader's own case was not measured here: said first, with the case answered instead.
      out.append(text("p", `${notHere} The nearest measured case, answered below: `
        + `${point.workload} at batch ${batchText(point.batch)} in ${point.dtype}.`,
        {class: "atlas-chooser-unmeasured"}));
    }
    if (point.stream) { showStream(point, env); return; }
    const step = guide.calls.indexOf(Number(el.calls.value));
    const a = point.answers[step];
    const head = text("p", undefined, {class: "atlas-chooser-result"});
    head.append(text("strong", a.mode), kind(a));
    const paysBack = (calls) => `${calls} call${calls === "1" ? "" : "s"}`;
    const cost = (mode, compile, calls) => (mode === "eager" ? "nothing to compile"
      : `${compile} to compile, ${paysBack(calls)} to pay back`);
    if (a.mode === "eager") {
      head.append(" — no other mode pays back its compile within "
                  + `${count(guide.calls[step])} calls and runs measurably faster than eager.`);
    } else {
      head.append(` — ${times(a.speedup)} faster than eager (${times(a.speedup_lo)}–`
        + `${times(a.speedup_hi)}, ${a.processes} ${a.timing} process${a.processes === 1 ? "" : "es"}); `
        + `it pays back in ${paysBack(a.pays_back)}.`);
    }
    if (a.mode_runner_up) {
      head.append(` Runner-up: ${a.mode_runner_up}, ${times(a.speedup_runner_up)}; `
        + (a.tie ? `a tie (the lead is inside the spread and below ${(guide.tie_below * 100).toFixed(1)}%), `
                   + `so the cheaper mode is named first: ${a.mode}, ${cost(a.mode, a.cold_compile_s, a.pays_back)}; `
                   + `${a.mode_runner_up}, ${cost(a.mode_runner_up, a.cold_compile_s_runner_up, a.pays_back_runner_up)}.`
                 : `a lead of ${(a.margin * 100).toFixed(1)}%.`));
    }
    out.append(head);
    if (a.host_dependent) out.append(hostAnswer(point.hosts[a.mode], point.env));
    else if (el.probe.dataset.typed) {
      out.append(text("p", "Your host's eager op cost does not change this answer: its gain "
                           + "was not found to depend on the host.", {class: "atlas-chooser-host"}));
    }
    const conditions = text("p", `${env.label}; ${el.work.value}, ${el.shapes.value} shapes, `
      + `${point.workload} at batch ${batchText(point.batch)}, ${point.dtype}. `,
      {class: "atlas-chooser-conditions"});
    const about = guide.workloads[point.workload].description;
    if (about) conditions.append(`${point.workload}: ${about}. `);
    conditions.append(text("a", "The row on the workload's page",
                           {href: `../../workloads/${point.workload}/`}), ".");
    out.append(conditions);
  }

  // A paragraph ending in a link to the varying-shapes page.
  function shapesPage(before) {
    const note = text("p", before, {class: "atlas-chooser-conditions"});
    note.append(text("a", "varying-shapes page", {href: "../shapes/"}), ".");
    return note;
  }
  // A stream's answer, field for field the varying-shapes page's first screen.
  function showStream(point, env) {
    const a = point.stream;
    const soonest = text("p", undefined, {class: "atlas-chooser-result"});
    if (a.soonest === null) {
      soonest.append("Not measured: no mode that passed its float64 check was measured on this stream.");
    } else {
      soonest.append("Soonest over the stream: ", text("strong", a.soonest),
        ` (${a.soonest_strategy}) — ${a.soonest_total} for its calls, compiles included; `
        + `eager's total ${a.eager_total}.`);
    }
    out.append(soonest);
    if (a.steadiest !== null) {
      const steadiest = text("p", undefined, {class: "atlas-chooser-steadiest"});
      steadiest.append("Lowest p99 once every shape is seen: ", text("strong", a.steadiest),
        ` (${a.steadiest_strategy}) — p99 ${a.steadiest_p99}, eager's ${a.eager_p99}; `
        + `it pays off from call: ${a.pays_off}; its memory per shape: ${a.memory}.`);
      out.append(steadiest);
    }
    out.append(shapesPage(`${env.label}; inference, varying shapes, ${point.workload} at batch `
      + `${batchText(point.batch)}, ${point.dtype}: ${a.inputs}. Every strategy is on the `));
  }

  fetch(root.dataset.guide)
    .then((r) => { if (!r.ok) throw new Error(`${root.dataset.guide}: ${r.status}`); return r.json(); })
    .then((guide) => { guideReference = guide.reference_probe_us; setup(guide); })
    .catch((error) => { out.textContent = `The measured answers could not be loaded (${error.message}).`; });
})();
