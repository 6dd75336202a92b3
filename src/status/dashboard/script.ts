/**
 * The dashboard's script (inlined in the page; its hash is in the page's CSP). It reads the status
 * stream (`/v1/council/events`) with fetch, so a token travels in a header, never in a URL, and
 * renders with DOM text nodes only (agent text never becomes markup).
 *
 * Plain ES2020 in a raw string: no build step. It uses no backtick and no dollar-brace.
 */
export const DASHBOARD_SCRIPT = String.raw`
"use strict";
(function () {
  var authOn = document.body.dataset.auth === "on";
  var token = null;
  var retryTimer = null;
  var aborter = null;
  var byId = function (id) { return document.getElementById(id); };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "cls") node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    Object.keys(attrs).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    return node;
  }
  function usd(n) { return "$" + (n || 0).toFixed(4); }
  function secs(ms) {
    if (ms === null || ms === undefined) return "–";
    var s = Math.floor(ms / 1000);
    if (s < 60) return (ms < 10000 ? (ms / 1000).toFixed(1) : String(s)) + "s";
    var m = Math.floor(s / 60);
    return m + "m " + String(s % 60).padStart(2, "0") + "s";
  }
  function tokens(n) {
    if (n < 1000) return String(n);
    if (n < 1e6) return (n / 1000).toFixed(n < 1e4 ? 1 : 0) + "k";
    return (n / 1e6).toFixed(1) + "M";
  }
  function clock(iso) { return new Date(iso).toLocaleTimeString(); }
  var MARKS = { running: "…", done: "✓", failed: "✗", "timed-out": "✗", cancelled: "⊘" };
  function stateCell(call) {
    return el("td", { cls: "state-" + call.state, "data-state": call.state },
      [MARKS[call.state] + " " + call.state]);
  }
  function table(headers, rows, numeric) {
    var head = el("tr", {}, headers.map(function (h, i) {
      return el("th", { text: h, cls: numeric.indexOf(i) >= 0 ? "num" : "" });
    }));
    return el("table", {}, [el("thead", {}, [head]), el("tbody", {}, rows)]);
  }
  function replace(id, node) {
    var box = byId(id);
    box.textContent = "";
    box.appendChild(node);
  }
  function decisionText(decision) {
    if (!decision) return "planning…";
    return decision.kind + " — " + decision.reason;
  }

  function renderLive(doc) {
    if (doc.live.length === 0) {
      replace("live", el("p", { cls: "empty", text: "No turn is running." }));
      return;
    }
    var box = el("div", {}, doc.live.map(function (turn) {
      var longest = Math.max.apply(null, [1].concat(turn.calls.map(function (c) {
        return c.elapsedMs;
      })));
      var rows = turn.calls.map(function (call) {
        var bar = el("div", { cls: "bar " + call.state });
        bar.style.width = Math.max(2, Math.round(180 * call.elapsedMs / longest)) + "px";
        return el("tr", { "data-agent": call.label }, [
          el("td", { text: call.label }), el("td", { text: call.role, cls: "muted" }),
          el("td", { text: call.model, cls: "muted" }), stateCell(call),
          el("td", { cls: "num", text: secs(call.elapsedMs) }),
          el("td", { cls: "barcell" }, [bar]),
          el("td", { cls: "num", text: (call.estimated ? "~" : "") + tokens(call.tokens) }),
          el("td", { cls: "num", text: call.state === "running" ? "–" : usd(call.costUsd) }),
          el("td", { cls: "wrap muted", text: call.activity || "" }),
        ]);
      });
      return el("div", { cls: "turn", "data-turn": turn.turn }, [
        el("div", { cls: "head" }, [
          el("b", { text: turn.turn }),
          el("span", { cls: "muted", text: "session " + turn.session.slice(0, 12) }),
          el("span", { text: turn.model + " · " + turn.kind }),
          el("span", { text: decisionText(turn.decision) }),
          el("span", { text: secs(turn.elapsedMs) }),
          el("span", { text: usd(turn.usd) + " so far" }),
        ]),
        rows.length ? table(["agent", "role", "model", "state", "elapsed", "progress",
          "tokens", "cost", "doing"], rows, [4, 6, 7]) : el("p", { cls: "empty", text: "No call yet." }),
      ]);
    }));
    replace("live", box);
  }

  function renderRecent(doc) {
    if (doc.recent.length === 0) {
      replace("recent", el("p", { cls: "empty", text: "No turn has finished yet." }));
      return;
    }
    var rows = doc.recent.map(function (turn) {
      var calls = turn.calls.map(function (c) {
        return c.label + " " + MARKS[c.state] + " " + secs(c.elapsedMs);
      }).join(" · ");
      var result = turn.cancelled ? "cancelled" : turn.failed ? "failed" : turn.outcome;
      return el("tr", { "data-turn": turn.turn }, [
        el("td", { text: clock(turn.endedAt) }), el("td", { text: turn.turn }),
        el("td", { cls: "muted", text: turn.session.slice(0, 12) }),
        el("td", { text: turn.decision ? turn.decision.kind : "" }),
        el("td", { cls: "wrap", text: calls }),
        el("td", { cls: "num", text: secs(turn.wallMs) }), el("td", { text: result }),
        el("td", { cls: "num", text: usd(turn.usd) }),
      ]);
    });
    replace("recent", table(["ended", "turn", "session", "decision", "calls", "wall",
      "result", "cost"], rows, [5, 7]));
  }

  var HEALTH_MARKS = { healthy: "✓", failing: "✗", "cooling-down": "⊘" };
  function healthState(h) { return h ? h.state : "healthy"; }
  function healthText(h) {
    if (h && h.state === "healthy" && h.missesInRow > 0) {
      return HEALTH_MARKS.healthy + " slow: its grace missed " + h.missesInRow + " turn" +
        (h.missesInRow === 1 ? "" : "s") + " in a row (no failure)";
    }
    if (!h || h.state === "healthy") return HEALTH_MARKS.healthy + " ok";
    var n = h.failuresInRow;
    var calls = n + " failed call" + (n === 1 ? "" : "s") + " in a row";
    var why = h.lastError ? ": " + h.lastError : "";
    if (h.state === "cooling-down") {
      return HEALTH_MARKS[h.state] + " cooling down: skipped until " + clock(h.coolingUntil) + " (" +
        secs(h.coolingLeftMs) + " left) after " + calls + why;
    }
    var probation = h.probation ? " (on probation: not waited for past the quorum)" : "";
    return (HEALTH_MARKS[h.state] || "?") + " " + h.state + probation + ": " + calls + why;
  }
  function renderHealthNotice(doc) {
    var cooling = doc.agents.filter(function (a) {
      return healthState(a.health) === "cooling-down";
    });
    byId("health").textContent = cooling.map(function (a) {
      return a.agent + " cooling down until " + clock(a.health.coolingUntil) + " (" +
        secs(a.health.coolingLeftMs) + " left)";
    }).join(" · ");
  }

  function renderAgents(doc) {
    renderHealthNotice(doc);
    if (doc.agents.length === 0) {
      replace("agents", el("p", { cls: "empty", text: "No agent has been called yet." }));
      return;
    }
    var rows = doc.agents.map(function (a) {
      var state = healthState(a.health);
      return el("tr", { "data-agent": a.agent, "data-health": state, cls: "health-" + state }, [
        el("td", { text: a.agent }), el("td", { cls: "num", text: String(a.calls) }),
        el("td", { cls: "num", text: String(a.failures) }),
        el("td", { cls: "num", text: String(a.cancelled) }),
        el("td", { cls: "num", text: secs(a.medianMs) }),
        el("td", { cls: "num", text: a.chosen + " / " + a.candidates }),
        el("td", { cls: "num", text: tokens(a.inputTokens) + " / " + tokens(a.outputTokens) }),
        el("td", { cls: "num", text: usd(a.usd) }),
        el("td", { cls: "wrap health", text: healthText(a.health) }),
      ]);
    });
    replace("agents", table(["agent", "calls", "failures", "cancelled", "median latency",
      "chosen / candidates", "tokens in / out", "cost", "health"], rows, [1, 2, 3, 4, 5, 6, 7]));
  }

  function pct(part, whole) { return whole > 0 ? Math.round(100 * part / whole) + " %" : "—"; }
  function seatChart(seated) {
    var ROW = 22, LABEL = 110, W = 600;
    var top = Math.max.apply(null, seated.map(function (a) { return a.seat.turns; }).concat([1]));
    var chart = svg("svg", { viewBox: "0 0 " + W + " " + (seated.length * ROW + 18), role: "img",
      "aria-label": "turns chosen (bar) and agreeing with the chosen call (inner bar) per agent" });
    seated.forEach(function (a, i) {
      var y = i * ROW + 4, scale = (W - LABEL - 10) / top;
      chart.appendChild(svg("text", { x: LABEL - 6, y: y + 13, "text-anchor": "end", text: a.agent }));
      chart.appendChild(svg("rect", { x: LABEL, y: y, height: 16, "class": "spend",
        width: Math.max(1, a.seat.chosen * scale) }));
      chart.appendChild(svg("rect", { x: LABEL, y: y + 6, height: 4, "class": "agreed",
        width: a.seat.agreed * scale }));
    });
    chart.appendChild(svg("text", { x: LABEL, y: seated.length * ROW + 16,
      text: "chosen (bar) · agreed with the chosen call (thin bar), of " + top + " turns" }));
    return chart;
  }

  function renderSeats(doc) {
    var seated = doc.agents.filter(function (a) { return a.seat; });
    if (seated.length === 0) {
      replace("seats", el("p", { cls: "empty", text: "No turns recorded yet." }));
      return;
    }
    var rows = seated.map(function (a) {
      var s = a.seat;
      return el("tr", { "data-agent": a.agent }, [
        el("td", { text: a.agent }), el("td", { cls: "num", text: String(s.turns) }),
        el("td", { cls: "num", text: s.valid + " / " + s.proposals }),
        el("td", { cls: "num", text: String(s.chosen) }),
        el("td", { cls: "num", text: s.chosenOk + " / " + s.chosenError + " / " + s.chosenRejected }),
        el("td", { cls: "num", text: pct(s.agreed, s.valid) }),
        el("td", { cls: "num", text: String(s.failed) }),
        el("td", { cls: "num", text: usd(s.usd) }), el("td", { cls: "num", text: secs(s.medianMs) }),
      ]);
    });
    replace("seats", el("div", {}, [
      table(["agent", "turns", "valid / proposals", "chosen", "ok / error / rejected", "agreed",
        "failed", "cost", "median"], rows, [1, 2, 3, 4, 5, 6, 7, 8]),
      seatChart(seated),
      el("ul", {}, seated.map(function (a) { return el("li", { text: a.seat.sentence }); })),
    ]));
  }

  function renderSpend(doc) {
    var W = 900, H = 180, PAD = 28, MINUTES = 60;
    var now = Date.parse(doc.now);
    var first = Math.floor(now / 60000) * 60000 - (MINUTES - 1) * 60000;
    var buckets = new Array(MINUTES).fill(0);
    doc.spend.perMinute.forEach(function (m) {
      var i = Math.round((Date.parse(m.minute) - first) / 60000);
      if (i >= 0 && i < MINUTES) buckets[i] += m.usd;
    });
    var top = Math.max.apply(null, buckets.concat([1e-9]));
    var running = 0;
    var cumulative = buckets.map(function (v) { running += v; return running; });
    var topTotal = Math.max(running, 1e-9);
    var chart = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img",
      "aria-label": "spend per minute over the last hour" });
    chart.appendChild(svg("line", { x1: PAD, y1: H - PAD, x2: W, y2: H - PAD, "class": "axis" }));
    var step = (W - PAD) / MINUTES;
    var points = [];
    buckets.forEach(function (v, i) {
      var h = (H - 2 * PAD) * v / top;
      if (v > 0) {
        chart.appendChild(svg("rect", { x: PAD + i * step + 1, y: H - PAD - h,
          width: Math.max(1, step - 2), height: h, "class": "spend" }));
      }
      points.push((PAD + (i + 0.5) * step) + "," + (H - PAD - (H - 2 * PAD) * cumulative[i] / topTotal));
    });
    chart.appendChild(svg("polyline", { points: points.join(" "), "class": "total" }));
    chart.appendChild(svg("text", { x: PAD, y: 14, text: "per minute (bars, max " + usd(top) +
      ") · cumulative (line, " + usd(running) + " this hour)" }));
    chart.appendChild(svg("text", { x: PAD, y: H - 8, text: clock(new Date(first).toISOString()) }));
    chart.appendChild(svg("text", { x: W - 2, y: H - 8, "text-anchor": "end", text: clock(doc.now) }));
    replace("spend", el("div", {}, [
      el("p", { text: "Since start: " + usd(doc.spend.usd) + " over " + doc.spend.turns +
        " turns and " + doc.spend.calls + " agent calls." }),
      chart,
    ]));
  }

  function render(doc) {
    byId("version").textContent = "v" + doc.version;
    byId("uptime").textContent = "up " + secs(doc.uptimeMs);
    byId("config").textContent = "config: " + (doc.configPath || "defaults");
    var running = doc.live.reduce(function (sum, turn) { return sum + turn.usd; }, 0);
    byId("total").textContent = "spent " + usd(doc.spend.usd) +
      (running > 0 ? " (+" + usd(running) + " running)" : "");
    renderLive(doc);
    renderRecent(doc);
    renderAgents(doc);
    renderSeats(doc);
    renderSpend(doc);
  }

  // With a shared database: every replica's live turns and each person key's spend.
  function renderTeam(doc) {
    if (!doc || !doc.totals) return;
    byId("team-section").hidden = false;
    var replicas = doc.replicas.map(function (r) {
      return el("tr", {}, [
        el("td", { text: r.host + " (pid " + r.pid + ")" }),
        el("td", { text: String(r.liveTurns), cls: "num" }),
        el("td", { text: clock(r.heartbeatAt) }),
      ]);
    });
    var keys = doc.keys.map(function (k) {
      return el("tr", {}, [
        el("td", { text: k.name }),
        el("td", { text: usd(k.spentUsd) + " of " + usd(k.maxUsd), cls: "num" }),
        el("td", { text: k.period === "none" ? "in all" : "per " + k.period }),
        el("td", { text: k.revokedAt ? "revoked" : k.spentUsd >= k.maxUsd ? "over budget" : "live" }),
      ]);
    });
    var node = byId("team");
    node.replaceChildren(
      el("p", { text: doc.totals.replicas + " replicas, " + doc.totals.liveTurns + " live turns" }),
      table(["replica", "live turns", "last beat"], replicas, [1]),
      table(["key", "spend this period", "budget", "state"], keys, [1]),
    );
  }
  var teamTimer = null;
  function pollTeam() {
    clearTimeout(teamTimer);
    fetch("/v1/council/team", { headers: headers(), cache: "no-store" })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(renderTeam)
      .catch(function () {})
      .then(function () { teamTimer = setTimeout(pollTeam, 5000); });
  }

  function setConnection(text, cls) {
    var node = byId("connection");
    node.textContent = text;
    node.className = cls;
  }
  function showLogin(message) {
    byId("dashboard").hidden = true;
    byId("login").hidden = false;
    byId("login-error").textContent = message || "";
    byId("token").focus();
  }
  function showDashboard() {
    byId("login").hidden = true;
    byId("dashboard").hidden = false;
  }
  function headers() { return token ? { authorization: "Bearer " + token } : {}; }

  function handleFrame(frame) {
    var event = "message", data = "";
    frame.split("\n").forEach(function (line) {
      if (line.indexOf("event:") === 0) event = line.slice(6).trim();
      else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
    });
    if (event === "status" && data) render(JSON.parse(data));
  }

  function retry() {
    setConnection("reconnecting…", "down");
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connect, 2000);
  }

  function connect() {
    if (aborter) aborter.abort();
    aborter = new AbortController();
    fetch("/v1/council/events", { headers: headers(), signal: aborter.signal, cache: "no-store" })
      .then(function (res) {
        if (res.status === 401) {
          token = null;
          setConnection("signed out", "down");
          showLogin(authOn ? "The gateway refused that token." : "The gateway asks for a token.");
          return;
        }
        if (!res.ok || !res.body) throw new Error("HTTP " + res.status);
        showDashboard();
        setConnection("live", "live");
        pollTeam();
        var reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        var buffer = "";
        var pump = function () {
          return reader.read().then(function (chunk) {
            if (chunk.done) throw new Error("stream ended");
            buffer += chunk.value.replace(/\r\n/g, "\n");
            var end;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              handleFrame(buffer.slice(0, end));
              buffer = buffer.slice(end + 2);
            }
            return pump();
          });
        };
        return pump();
      })
      .catch(function (error) {
        if (error && error.name === "AbortError") return;
        retry();
      });
  }

  byId("login").addEventListener("submit", function (event) {
    event.preventDefault();
    var field = byId("token");
    token = field.value.trim();
    field.value = "";
    if (!token) return showLogin("Enter the gateway's token.");
    byId("login-error").textContent = "";
    connect();
  });

  if (authOn) showLogin("");
  else connect();
})();
`;
