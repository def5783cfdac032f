// A person's session (--agent human), played back from the trial's terminal.cast (asciinema v2) in xterm.js:
// play / pause, restart, the end at once, a speed. The cast's text only ever reaches the terminal emulator,
// never the page's HTML.
(function () {
  "use strict";
  const box = document.getElementById("terminal-player");
  if (!box || typeof Terminal === "undefined") return;
  const status = box.querySelector(".status");
  fetch(box.dataset.cast, {credentials: "same-origin"}).then(function (r) {
    if (!r.ok) throw new Error("the recording could not be read (" + r.status + ")");
    return r.text();
  }).then(function (text) {
    const lines = text.split("\n").filter(function (l) { return l.trim(); });
    const header = JSON.parse(lines[0]);
    const events = [];
    for (const line of lines.slice(1)) {
      try {
        const ev = JSON.parse(line);
        if (Array.isArray(ev) && ev[1] === "o" && typeof ev[2] === "string") events.push(ev);
      } catch (err) { /* a torn last line: played up to it */ }
    }
    const total = events.length ? events[events.length - 1][0] : 0;
    const term = new Terminal({cols: header.width || 80, rows: header.height || 24, disableStdin: true,
                               scrollback: 5000});
    term.open(box.querySelector(".screen"));
    let next = 0, at = 0, since = 0, timer = null;
    const speed = function () { return parseFloat(box.querySelector("select.speed").value) || 1; };
    const show = function () {
      status.textContent = at.toFixed(1) + " s of " + total.toFixed(1) + " s";
      box.dataset.state = next >= events.length ? "ended" : timer ? "playing" : "paused";
    };
    const tick = function () {
      const now = performance.now();
      at += (now - since) / 1000 * speed();
      since = now;
      let chunk = "";
      while (next < events.length && events[next][0] <= at) chunk += events[next++][2];
      if (chunk) term.write(chunk);
      timer = next < events.length ? setTimeout(tick, 50) : null;
      if (!timer) at = total;
      show();
    };
    const play = function () { if (!timer && next < events.length) { since = performance.now(); tick(); } };
    const pause = function () { clearTimeout(timer); timer = null; show(); };
    const restart = function () { pause(); term.reset(); next = 0; at = 0; play(); };
    box.querySelector("button.play").addEventListener("click", function () { timer ? pause() : play(); });
    box.querySelector("button.restart").addEventListener("click", restart);
    box.querySelector("button.end").addEventListener("click", function () {
      pause();
      term.write(events.slice(next).map(function (ev) { return ev[2]; }).join(""));
      next = events.length; at = total; show();
    });
    show();
  }).catch(function (err) { status.textContent = String(err.message || err); box.dataset.state = "error"; });
})();

// A person's session that waits or runs: typed keys go to the view, which carries them to the session's door;
// the output is long-polled from an offset.
(function () {
  "use strict";
  const box = document.getElementById("terminal-live");
  if (!box || typeof Terminal === "undefined") return;
  const status = box.querySelector(".status");
  const term = new Terminal({cols: 110, rows: 30, scrollback: 5000});
  term.open(box.querySelector(".screen"));
  const post = function (data) {
    return fetch(box.dataset.base + "/keys", {method: "POST", credentials: "same-origin",
                                              headers: {"Content-Type": "application/json"},
                                              body: JSON.stringify({data: data})});
  };
  // one request at a time, in order: keys typed while one is on its way go together in the next
  let pending = "", sending = false;
  const send = function () {
    if (sending || !pending) return;
    sending = true;
    const data = pending;
    pending = "";
    post(data).catch(function () { /* the session ended: the output poll says so */ })
      .finally(function () { sending = false; send(); });
  };
  term.onData(function (data) { pending += data; send(); });
  let next = 0;
  const poll = function () {
    fetch(box.dataset.base + "/output?from=" + next, {credentials: "same-origin"}).then(function (r) {
      if (!r.ok) throw new Error("the session is not open (" + r.status + ")");
      return r.json();
    }).then(function (out) {
      const bytes = Uint8Array.from(atob(out.data), function (c) { return c.charCodeAt(0); });
      if (bytes.length) term.write(bytes);
      next = out.next;
      box.dataset.state = out.open ? "attached" : "ended";
      status.textContent = out.open ? "attached" : "the session is over";
      if (out.open) poll();
    }).catch(function (err) { box.dataset.state = "ended"; status.textContent = String(err.message || err); });
  };
  poll();
  box.scrollIntoView();  // xterm.js draws only what is on screen; and this is where the person types
  term.focus();
})();
