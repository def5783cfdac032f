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
