// The guide's chooser: the reader's device, work, batch, calls per process and shapes
// select measured points from the exported speedups (data/speedups.json) and the guide's
// break-even table (analysis/guide-data.json); the answer is the mode that is faster than
// eager by the guide's margin at those points and pays back its compile within the calls.
// Nothing here is a figure of its own: every number shown is a row of the two files.
(function () {
  "use strict";
  const root = document.getElementById("chooser");
  if (!root) return;
  const form = root.querySelector("form");
  const out = root.querySelector(".atlas-chooser-answer");
  const skipped = new Set(["launch-overhead", "warmup"]); // microbenchmarks, not models

  function versionKey(torch) {
    return String(torch).split("+")[0].split(".").map((n) => parseInt(n, 10) || 0);
  }
  function newer(a, b) {
    const x = versionKey(a), y = versionKey(b);
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      if ((x[i] || 0) !== (y[i] || 0)) return (x[i] || 0) > (y[i] || 0);
    }
    return false;
  }
  function median(values) {
    const v = values.slice().sort((a, b) => a - b);
    const m = Math.floor(v.length / 2);
    return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  }
  function times(x) { return x.toFixed(2) + "×"; }
  function about(calls, lo, hi) {
    if (!isFinite(calls)) return "never";
    const digits = (lo > 0 && isFinite(hi) && hi / lo <= 3) ? 2 : 1;
    if (calls < Math.pow(10, digits)) return Math.ceil(calls).toLocaleString("en");
    const step = Math.pow(10, Math.floor(Math.log10(calls)) - digits + 1);
    return "about " + (Math.round(calls / step) * step).toLocaleString("en");
  }
  function text(tag, content, attrs) {
    const node = document.createElement(tag);
    if (content !== undefined) node.textContent = content;
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    return node;
  }

  function setup(rows, guide) {
    const byDevice = new Map();
    rows.filter((r) => r.baseline === "eager").forEach((r) => {
      if (!byDevice.has(r.device)) byDevice.set(r.device, {backend: r.backend, rows: []});
      byDevice.get(r.device).rows.push(r);
    });
    const select = form.elements.device;
    [...byDevice.entries()]
      .sort((a, b) => (a[1].backend === "cuda" ? 0 : 1) - (b[1].backend === "cuda" ? 0 : 1)
                      || a[0].localeCompare(b[0]))
      .forEach(([device, found]) => select.append(text("option", `${device} (${found.backend})`,
                                                       {value: device})));
    const calls = new Map(guide.break_even.map((r) => [
      [r.env_id, r.workload, r.size, r.mode].join("|"),
      r.cold_calls === "never" ? Infinity : r.cold_calls]));
    const answer = () => show(byDevice.get(select.value), guide, calls);
    form.addEventListener("input", answer);
    form.addEventListener("change", answer);
    answer();
  }

  // The rows that answer the question: the newest torch measured for the device, the
  // workloads of the chosen kind, each at the measured size nearest the batch.
  function points(found, guide, want) {
    const kind = found.rows.filter((r) => {
      const w = guide.workloads[r.workload];
      return w && !skipped.has(w.family) && w.axis !== "n" && w.training === (want.work === "training")
        && w.varying === (want.shapes === "varying") && typeof r.speedup === "number";
    });
    if (!kind.length) return [];
    // One environment: the newest torch on this device, then the one with the most rows.
    const count = new Map();
    kind.forEach((r) => count.set(r.env_id, (count.get(r.env_id) || 0) + 1));
    const env = kind.reduce((a, b) => (newer(b.torch, a.torch) || (b.torch === a.torch
      && count.get(b.env_id) > count.get(a.env_id)) ? b : a)).env_id;
    const here = kind.filter((r) => r.env_id === env);
    const batched = here.filter((r) => r.size !== null);
    const pool = batched.length ? batched : here;
    const nearest = new Map();
    pool.forEach((r) => {
      const d = r.size === null ? 0 : Math.abs(Math.log(r.size) - Math.log(want.batch));
      const best = nearest.get(r.workload);
      if (best === undefined || d < best) nearest.set(r.workload, d);
    });
    return pool.filter((r) => (r.size === null ? 0 : Math.abs(Math.log(r.size) - Math.log(want.batch)))
                              === nearest.get(r.workload));
  }

  function show(found, guide, calls) {
    out.replaceChildren();
    if (!found) { out.append(text("p", "Not measured: no speedups were exported.")); return; }
    const want = {work: form.elements.work.value, shapes: form.elements.shapes.value,
                  batch: Math.max(1, parseInt(form.elements.batch.value, 10) || 1),
                  calls: Math.max(1, parseInt(form.elements.calls.value, 10) || 1)};
    const rows = points(found, guide, want);
    if (!rows.length) {
      out.append(text("p", `Not measured: no ${want.work} workload with ${want.shapes} shapes `
                           + `was measured on this device.`));
      return;
    }
    const where = new Set(rows.map((r) => r.workload + "|" + r.size)).size;
    const modes = new Map();
    rows.filter((r) => r.mode !== "eager").forEach((r) => {
      if (!modes.has(r.mode)) modes.set(r.mode, []);
      modes.get(r.mode).push(r);
    });
    const summary = [...modes.entries()].filter(([, rs]) => rs.length === where).map(([mode, rs]) => {
      const even = rs.map((r) => calls.get([r.env_id, r.workload, r.size, r.mode].join("|")))
        .filter((c) => c !== undefined && c !== null);
      return {mode, rows: rs, speedup: median(rs.map((r) => r.speedup)),
              lo: Math.min(...rs.map((r) => r.speedup_min ?? r.speedup)),
              hi: Math.max(...rs.map((r) => r.speedup_max ?? r.speedup)),
              calls: even.length ? median(even) : null,
              callsLo: even.length ? Math.min(...even) : null,
              callsHi: even.length ? Math.max(...even) : null};
    }).sort((a, b) => b.speedup - a.speedup);
    const settled = (s) => !(s.lo > 0 && s.hi / s.lo > guide.outlier_spread);
    const faster = summary.filter((s) => s.speedup >= 1 + guide.gain && settled(s));
    const pays = faster.filter((s) => s.calls !== null && s.calls <= want.calls);
    const chosen = pays[0] || null;
    const best = chosen || faster[0] || summary[0] || null;
    const torch = rows[0].torch;
    const head = text("p");
    head.className = "atlas-chooser-result";
    if (chosen) {
      head.append(text("strong", chosen.mode), ` — ${times(chosen.speedup)} faster than eager `
        + `(${times(chosen.lo)}–${times(chosen.hi)}) at ${where} measured point${where === 1 ? "" : "s"}; `
        + `it pays back its compile after ${about(chosen.calls, chosen.callsLo, chosen.callsHi)} calls, `
        + `fewer than your ${want.calls.toLocaleString("en")}.`);
    } else {
      head.append(text("strong", "eager"), " — ");
      if (!best) {
        head.append("no compiled mode was timed at every one of these points.");
      } else if (!settled(best)) {
        head.append(`unsettled: ${best.mode} measured ${times(best.speedup)} but its processes `
          + `range from ${times(best.lo)} to ${times(best.hi)} (an outlier process).`);
      } else if (best.speedup < 1 + guide.gain) {
        head.append(`no mode was ${Math.round(guide.gain * 100)}% faster; the best, ${best.mode}, `
          + `measured ${times(best.speedup)} (${times(best.lo)}–${times(best.hi)}).`);
      } else {
        const payback = best.calls === null ? "its compile time was not measured here"
          : !isFinite(best.calls) ? "at the median point it never pays back its compile"
          : `it pays back its compile only after ${about(best.calls, best.callsLo, best.callsHi)} calls, `
            + `more than your ${want.calls.toLocaleString("en")}`;
        head.append(`${best.mode} is ${times(best.speedup)} faster (${times(best.lo)}–${times(best.hi)}), `
          + `but ${payback}.`);
      }
    }
    out.append(head);
    out.append(text("p", `${found.rows[0].device}, torch ${torch}, machine ${rows[0].machine || "not recorded"}; `
      + `${want.work}, ${want.shapes} shapes, `
      + `nearest measured batch to ${want.batch}. Evidence:`, {class: "atlas-chooser-conditions"}));
    const shown = best ? best.rows : [];
    const table = text("table");
    const header = text("tr");
    ["workload", "batch", "mode", "speedup over eager", "range", "processes", "calls to break even"]
      .forEach((h) => header.append(text("th", h)));
    table.append(text("thead"));
    table.firstChild.append(header);
    const body = text("tbody");
    shown.forEach((r) => {
      const tr = text("tr");
      const link = text("a", r.workload, {href: `../../workloads/${r.workload}/`});
      const cell = text("td");
      cell.append(link);
      const even = calls.get([r.env_id, r.workload, r.size, r.mode].join("|"));
      tr.append(cell, text("td", r.size === null ? "—" : String(r.size)), text("td", r.mode),
                text("td", times(r.speedup)),
                text("td", r.speedup_min == null ? "single run"
                  : `${times(r.speedup_min)}–${times(r.speedup_max)}`),
                text("td", r.processes == null ? "—" : String(r.processes)),
                text("td", even == null ? "not measured" : (isFinite(even) ? even.toLocaleString("en") : "never")));
      body.append(tr);
    });
    table.append(body);
    out.append(table);
  }

  Promise.all([root.dataset.speedups, root.dataset.guide].map((url) =>
    fetch(url).then((r) => { if (!r.ok) throw new Error(`${url}: ${r.status}`); return r.json(); })))
    .then(([rows, guide]) => setup(rows, guide))
    .catch((error) => { out.textContent = `The measured speedups could not be loaded (${error.message}).`; });
})();
