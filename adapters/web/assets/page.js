// minirag's search page, made quicker: search as you type, keyboard moves,
// and a sync followed live. Without this file every view still works.
"use strict";

(function () {
  const $ = (sel) => document.querySelector(sel);

  // "/" focuses the search box, from anywhere but a text field.
  document.addEventListener("keydown", (e) => {
    const typing = /^(INPUT|SELECT|TEXTAREA)$/.test(document.activeElement.tagName);
    if (e.key === "/" && !typing) {
      const q = $("#q");
      if (q) { e.preventDefault(); q.focus(); q.select(); }
    }
  });

  // Arrow keys move through the results; Enter follows the focused link.
  document.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    const links = Array.from(document.querySelectorAll("#results a.passage"));
    if (links.length === 0) return;
    const at = links.indexOf(document.activeElement);
    if (at === -1 && document.activeElement !== $("#q")) return;
    e.preventDefault();
    const next = e.key === "ArrowDown" ? at + 1 : at - 1;
    if (next < 0) { $("#q").focus(); return; }
    links[Math.min(next, links.length - 1)].focus();
  });

  // Search as you type: the server renders the results; the URL keeps the query.
  const form = $("#search");
  if (form) {
    let timer = 0;
    let asked = 0;
    const search = () => {
      const params = new URLSearchParams(new FormData(form));
      for (const [k, v] of Array.from(params.entries())) if (v === "") params.delete(k);
      const mine = ++asked;
      history.replaceState(null, "", params.has("q") ? "/?" + params : "/");
      if (!params.has("q")) { $("#results").innerHTML = ""; return; }
      fetch("/results?" + params, { credentials: "same-origin" })
        .then((r) => r.text())
        .then((html) => { if (mine === asked) $("#results").innerHTML = html; })
        .catch(() => {});
    };
    const later = () => { clearTimeout(timer); timer = setTimeout(search, 180); };
    form.addEventListener("input", later);
    form.addEventListener("change", later);
    form.addEventListener("submit", (e) => { e.preventDefault(); clearTimeout(timer); search(); });
  }

  // Sync: start, follow the job until it ends, cancel.
  const panel = $("#job");
  if (panel) {
    const post = (url, body) => fetch(url, {
      method: "POST", body, credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    const follow = (id) => {
      panel.dataset.job = id;
      history.replaceState(null, "", "/status?job=" + encodeURIComponent(id));
      const poll = () => fetch("/sync/job?id=" + encodeURIComponent(id), { credentials: "same-origin" })
        .then((r) => {
          const state = r.headers.get("x-job-state");
          return r.text().then((html) => {
            panel.innerHTML = html;
            const running = state === "running";
            $("#sync-now").disabled = running;
            $("#cancel-id").value = id;
            $("#cancel-form").hidden = !running;
            if (running) setTimeout(poll, 250);
          });
        })
        .catch(() => setTimeout(poll, 1000));
      poll();
    };
    $("#sync-form").addEventListener("submit", (e) => {
      e.preventDefault();
      $("#sync-now").disabled = true;
      post("/sync").then((r) => r.json()).then((j) => {
        if (j.jobId) follow(j.jobId);
        else { panel.textContent = j.error || "The sync did not start."; $("#sync-now").disabled = false; }
      });
    });
    $("#cancel-form").addEventListener("submit", (e) => {
      e.preventDefault();
      post("/sync/cancel", new URLSearchParams(new FormData(e.target)));
    });
    if (panel.dataset.job && panel.querySelector("[data-state=running]")) follow(panel.dataset.job);
  }
})();
