// The replay viewer: rebuilds a game's board from its record's events, one event at a time.
// Everything a bot supplies (names, notes, strike details) is written with textContent only.
"use strict";

// startViewer(root, recordText, signal): draw the game of `recordText` in the element `root`
// (data-hand, and data-live for a game in play). The page's own viewer starts at once; a page
// that shows one game after another (the club's season stream, watch.js) starts one per game
// and aborts `signal` to take the last one's listeners and timer away.
window.startViewer = function (root, recordText, signal) {
  const COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                   "#e377c2", "#17becf"];
  const data = JSON.parse(recordText);   // a game record (docs/replay-format.md)
  const events = data.events;
  const players = data.players;
  const targets = data.rules.slot ? 7 : 6;
  const hand = root.dataset.hand.split(",").map(Number);   // dice per seat at a round's start
  const decisions = Array.isArray(data.decisions) ? data.decisions : [];
  const forfeits = Array.isArray(data.forfeits) ? data.forfeits : [];
  const strikeCounts = Array.isArray(data.strikes) ? data.strikes : [];
  const names = [];
  for (let p = 0; p < players; p++) names.push("seat " + p);
  for (const bot of Array.isArray(data.bots) ? data.bots : []) {
    if (bot && Number.isInteger(bot.seat) && bot.seat >= 0 && bot.seat < players) {
      names[bot.seat] = String(bot.name);
    }
  }
  const neutralKind = data.rules.neutral === "grey" ? "grey" : "white";

  // The decision of each place event (same order), and the event index of each decision.
  const decisionOf = {};
  const placeEvents = [];   // the event index of each move (placement), in order
  events.forEach((e, i) => {
    if (e.type === "place") { decisionOf[i] = decisions[placeEvents.length] || null; placeEvents.push(i); }
  });

  // Control, format and bidi characters of bot text are shown as escapes (as the terminal
  // commands do), never left to act on the page; <pre> keeps its line breaks and tabs.
  const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
  const BREAKS = /[\n\t]/g;
  const escapeChar = (c) => (c.charCodeAt(0) < 0x100 ? "\\x" : "\\u") +
    c.charCodeAt(0).toString(16).padStart(c.charCodeAt(0) < 0x100 ? 2 : 4, "0");
  function visible(text, keepBreaks) {
    const shown = text.replace(HIDDEN, escapeChar);
    return keepBreaks ? shown : shown.replace(BREAKS, escapeChar);
  }

  function el(tag, cls, text, parent) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = visible(String(text), tag === "pre");
    if (parent) parent.appendChild(node);
    return node;
  }
  const dollars = (n) => "$" + Number(n).toLocaleString("en-US");
  const note = (n) => "$" + Math.round(n / 1000) + "k";
  const targetName = (t) => (t === 7 ? "the slot" : "casino " + t);
  const who = (p) => (p >= players ? "neutral" : names[p]);

  // ---- state: fold the first k events -------------------------------------------------------
  function stateAt(k) {
    const s = {
      round: null, casinos: [], hand: [], money: Array(players).fill(0),
      notes: Array(players).fill(0), strikes: Array(players).fill(0), roll: null, end: null,
    };
    for (let t = 1; t <= targets; t++) s.casinos[t] = emptyCasino();
    for (let p = 0; p < players; p++) s.hand[p] = [0, 0, 0];
    for (let i = 0; i < k; i++) {
      const e = events[i];
      if (e.type === "round") {
        s.round = e.round;
        for (let t = 1; t <= targets; t++) {
          s.casinos[t] = emptyCasino();
          s.casinos[t].notes = (e.casinos[t - 1] || []).slice();
        }
        for (let p = 0; p < players; p++) s.hand[p] = hand.slice();
        s.roll = null;
      } else if (e.type === "preroll") {
        for (const face of e.faces) s.casinos[face].neutral += 1;
      } else if (e.type === "roll") {
        s.roll = e;
      } else if (e.type === "place") {
        const c = s.casinos[e.slot ? 7 : e.value];
        c.own[e.seat] += e.own;
        c.big[e.seat] += e.big;
        c.neutral += e.neutral;
        c.order.push(e.seat);
        const h = s.hand[e.seat];
        h[0] -= e.own; h[1] -= e.big; h[2] -= e.neutral;
        const d = decisionOf[i];
        if (d && d.strike) s.strikes[e.seat] += 1;
        s.roll = null;
      } else if (e.type === "score") {
        const c = s.casinos[e.target];
        c.score = e;
        c.notes = [];
        for (const [p, amount] of e.payouts) {
          if (p < players) { s.money[p] += amount; s.notes[p] += 1; }
        }
      } else if (e.type === "end") {
        s.end = e;
        s.money = e.money.slice();
      }
    }
    return s;
  }

  function emptyCasino() {
    return {notes: [], own: Array(players).fill(0), big: Array(players).fill(0), neutral: 0,
            order: [], score: null};
  }

  // ---- the page --------------------------------------------------------------------------
  const controls = el("div", "controls", null, root);
  const buttons = {};
  for (const [name, label, title] of [["first", "«", "start (Home)"], ["prev", "◀", "back (←)"],
                                      ["play", "▶ play", "play / pause (space)"],
                                      ["next", "▶", "forward (→)"], ["last", "»", "end (End)"]]) {
    buttons[name] = el("button", "btn", label, controls);
    buttons[name].type = "button";
    buttons[name].title = title;
    buttons[name].id = "btn-" + name;
  }
  const slider = el("input", "slider", null, controls);
  slider.type = "range"; slider.min = 0; slider.max = events.length; slider.value = 0;
  slider.id = "step-slider";
  slider.setAttribute("aria-label", "event");
  const position = el("span", "position", null, controls);
  position.id = "step-position";
  const speed = el("select", "speed", null, controls);
  for (const [label, ms] of [["slow", 900], ["normal", 400], ["fast", 120]]) {
    const option = el("option", null, label, speed);
    option.value = ms;
    if (label === "normal") option.selected = true;
  }
  speed.title = "playback speed";

  const layout = el("div", "replay-layout", null, root);
  const boardBox = el("div", "board-box", null, layout);
  const headline = el("div", "headline", null, boardBox);
  headline.id = "headline";
  // Above the board: at the end of the game the standings are the first thing in view.
  const standings = el("div", "standings", null, boardBox);
  standings.id = "standings";
  const board = el("div", "board", null, boardBox);
  board.id = "board";
  const rollBox = el("div", "roll-box", null, boardBox);
  rollBox.id = "current";
  const seatsBox = el("div", "seats", null, boardBox);
  seatsBox.id = "seats";

  const side = el("div", "side", null, layout);
  const strikeBox = el("div", "card strikes-card", null, side);
  strikeBox.id = "strikes";
  const logBox = el("div", "card log-card", null, side);
  el("h2", null, "Events", logBox);
  const log = el("ol", "log", null, logBox);
  log.id = "event-log";

  // Casino cards, built once; their contents are redrawn at each step.
  const cards = [];
  for (let t = 1; t <= targets; t++) {
    const card = el("div", "casino" + (t === 7 ? " slot" : ""), null, board);
    card.dataset.target = t;
    const head = el("div", "casino-head", null, card);
    el("span", "casino-face face-" + (t === 7 ? "slot" : t), t === 7 ? "S" : String(t), head);
    el("span", "casino-name", t === 7 ? "Slot machine" : "Casino " + t, head);
    const notes = el("div", "banknotes", null, card);
    const dice = el("div", "placed", null, card);
    const result = el("div", "result", null, card);
    cards[t] = {card, notes, dice, result};
  }

  // Seat panels.
  const seatPanels = [];
  for (let p = 0; p < players; p++) {
    const panel = el("div", "seat", null, seatsBox);
    panel.dataset.seat = p;
    panel.style.borderColor = COLOURS[p % 8];
    const top = el("div", "seat-top", null, panel);
    const sw = el("span", "swatch", null, top);
    sw.style.background = COLOURS[p % 8];
    el("span", "seat-name", names[p], top);
    el("span", "seat-no", "seat " + p, top);
    const money = el("div", "money", null, panel);
    const notes = el("div", "seat-notes", null, panel);
    const handBox = el("div", "hand", null, panel);
    const strikes = el("div", "seat-strikes", null, panel);
    const output = Array.isArray(data.output) ? data.output[p] : null;
    if (typeof output === "string" && output) {
      const box = el("details", "seat-output", null, panel);
      el("summary", null, "bot output", box);
      el("pre", null, output, box);
    }
    seatPanels.push({panel, money, notes, hand: handBox, strikes});
  }

  // Event log entries, built once (a live game's as its events come).
  function logEntry(e, i) {
    const item = el("li", "ev ev-" + e.type, null, log);
    item.dataset.index = i;
    const d = decisionOf[i];
    if (e.type === "round") {
      item.classList.add("ev-round-head");
      el("span", null, "Round " + (e.round + 1) + ": " + who(e.start_seat) + " starts", item);
    } else if (e.type === "preroll") {
      el("span", null, "White dice pre-rolled onto casinos " + e.faces.join(", "), item);
    } else if (e.type === "roll") {
      dot(item, e.seat);
      el("span", null, who(e.seat) + " rolls " + describeRoll(e), item);
    } else if (e.type === "place") {
      dot(item, e.seat);
      el("span", null, describePlace(e), item);
      decisionNotes(item, d);
    } else if (e.type === "score") {
      el("span", null, describeScore(e), item);
    } else if (e.type === "end") {
      el("span", null, "Game over", item);
    }
    item.addEventListener("click", () => go(i + 1));
    return item;
  }
  const entries = events.map(logEntry);

  function dot(parent, seat) {
    const sw = el("span", "swatch", null, parent);
    sw.style.background = COLOURS[seat % 8];
  }

  function describeRoll(e) {
    let text = e.own.join(" ");
    if (e.big.length) text += " | big " + e.big.join(" ");
    if (e.neutral.length) text += " | neutral " + e.neutral.join(" ");
    return text;
  }

  function describePlace(e) {
    const dice = e.own + e.big;
    const parts = [];
    if (dice) parts.push((dice === 1 ? "1 die" : dice + " dice") + (e.big ? " (" + e.big + " big)" : ""));
    if (e.neutral) parts.push(e.neutral + " neutral" + (e.neutral === 1 ? " die" : " dice"));
    if (!parts.length) parts.push("no dice");
    return who(e.seat) + " puts " + parts.join(" + ") + " showing " + e.value + " on " +
      targetName(e.slot ? 7 : e.value);
  }

  function decisionNotes(parent, d) {
    if (!d) return;
    if (typeof d.latency_us === "number") {
      el("span", "think", (d.latency_us / 1000).toFixed(1) + " ms", parent);
    }
    if (d.strike) {
      el("div", "strike-line", d.strike + " strike: " + (d.detail || "") +
         " (the referee played a substitute move)", parent);
    } else if (d.auto) {
      el("span", "auto", d.auto === "forced" ? "forced move" : "forfeited: referee plays", parent);
    }
    if (d.note) {
      el("div", "bot-note", "note" + (d.note_cut ? " (cut)" : "") + ": " + d.note, parent);
    }
    if (d.values && typeof d.values === "object") {
      const text = Object.entries(d.values).map(([k, v]) => k + " = " + v).join(", ");
      if (text) el("div", "bot-values", "values: " + text, parent);
    }
  }

  function describeScore(e) {
    const present = e.counts.map((c, p) => [p, c]).filter(([, c]) => c > 0);
    if (!present.length && !e.payouts.length) {
      return targetName(e.target) + ": no dice; " +
        (e.leaving.map(note).join(" ") || "nothing") + " leaves";
    }
    let text = targetName(e.target) + ": " + present.map(([p, c]) => who(p) + " " + c).join(", ");
    if (e.cancelled.length) text += "; ties cancel " + e.cancelled.map(who).join(", ");
    if (e.payouts.length) {
      text += "; pays " + e.payouts.map(([p, n]) => who(p) + " " + note(n)).join(", ");
    }
    if (e.leaving.length) text += "; " + e.leaving.map(note).join(" ") + " leaves";
    return text;
  }

  // Strikes of the whole game, each a link to its move.
  const strikeEvents = events.map((e, i) => [e, i]).filter(([e, i]) =>
    e.type === "place" && decisionOf[i] && decisionOf[i].strike);
  el("h2", null, "Strikes (" + strikeEvents.length + ")", strikeBox);
  if (!strikeEvents.length) el("p", "note", "No strikes in this game.", strikeBox);
  const strikeList = el("ul", "strike-list", null, strikeBox);
  for (const [e, i] of strikeEvents) {
    const item = el("li", "strike-item", null, strikeList);
    dot(item, e.seat);
    const d = decisionOf[i];
    const link = el("a", null, who(e.seat) + ": " + d.strike, item);
    link.href = "#";
    link.addEventListener("click", (ev) => { ev.preventDefault(); go(i + 1); });
    el("span", "detail", " " + (d.detail || ""), item);
  }

  // ---- drawing ----------------------------------------------------------------------------
  function die(parent, cls, colour, face, title) {
    const node = el("span", "die " + cls, face === undefined ? null : face, parent);
    if (colour) node.style.background = colour;
    if (title) node.title = title;
    return node;
  }

  function draw(k) {
    const s = stateAt(k);
    const current = k > 0 ? events[k - 1] : null;
    headline.textContent = s.round === null ? "Before the first round"
      : (s.end ? "Game over" : "Round " + (s.round + 1) + " of " + data.rules.rounds);
    for (let t = 1; t <= targets; t++) {
      const c = s.casinos[t];
      const view = cards[t];
      view.card.classList.toggle("active", !!current &&
        ((current.type === "place" && (current.slot ? 7 : current.value) === t) ||
         (current.type === "score" && current.target === t)));
      view.card.classList.toggle("scored", !!c.score);
      view.notes.replaceChildren();
      // Highest first, as `referee show`, `match` and the SDK's view list them.
      for (const n of [...c.notes].sort((a, b) => b - a)) {
        el("span", "banknote n" + Math.round(n / 10000), note(n), view.notes);
      }
      view.dice.replaceChildren();
      const seats = [];
      for (const p of c.order) if (!seats.includes(p)) seats.push(p);
      for (const p of seats) {
        const group = el("span", "dice-group", null, view.dice);
        group.title = names[p] + ": " + c.own[p] + " dice" + (c.big[p] ? ", " + c.big[p] + " big" : "");
        for (let n = 0; n < c.own[p]; n++) die(group, "own", COLOURS[p % 8]);
        for (let n = 0; n < c.big[p]; n++) die(group, "big", COLOURS[p % 8]);
      }
      if (c.neutral) {
        const group = el("span", "dice-group", null, view.dice);
        group.title = c.neutral + " neutral dice";
        for (let n = 0; n < c.neutral; n++) die(group, "neutral " + neutralKind);
      }
      view.result.replaceChildren();
      if (c.score) scoreView(view.result, c.score);
    }
    drawCurrent(current, k);
    for (let p = 0; p < players; p++) {
      const panel = seatPanels[p];
      panel.money.textContent = dollars(s.money[p]);
      panel.notes.textContent = s.notes[p] + (s.notes[p] === 1 ? " note" : " notes");
      panel.hand.replaceChildren();
      const h = s.hand[p];
      for (let n = 0; n < h[0]; n++) die(panel.hand, "own small", COLOURS[p % 8]);
      for (let n = 0; n < h[1]; n++) die(panel.hand, "big small", COLOURS[p % 8]);
      for (let n = 0; n < h[2]; n++) die(panel.hand, "neutral small " + neutralKind);
      if (!h[0] && !h[1] && !h[2]) el("span", "note", s.round === null ? "" : "no dice left", panel.hand);
      panel.strikes.textContent = s.strikes[p] ? s.strikes[p] + " strike" + (s.strikes[p] > 1 ? "s" : "") : "";
      const turn = current && (current.type === "roll" || current.type === "place") && current.seat === p;
      panel.panel.classList.toggle("turn", !!turn);
      panel.panel.classList.toggle("winner", !!s.end && s.end.places[p] === 1);
    }
    drawStandings(s);
    entries.forEach((item, i) => item.classList.toggle("current", i === k - 1));
    if (k > 0) {
      const item = entries[k - 1];
      const top = item.offsetTop;   // the log is the items' offset parent
      if (top < log.scrollTop || top > log.scrollTop + log.clientHeight - item.offsetHeight) {
        log.scrollTop = top - log.clientHeight / 2;
      }
    } else {
      log.scrollTop = 0;
    }
    slider.value = k;
    position.textContent = "event " + k + " / " + events.length;
    buttons.prev.disabled = buttons.first.disabled = k === 0;
    buttons.next.disabled = buttons.last.disabled = k === events.length;
  }

  function scoreView(parent, e) {
    if (e.cancelled.length) {
      el("div", "cancelled", "ties cancel: " + e.cancelled.map(who).join(", "), parent);
    }
    for (const [p, n] of e.payouts) {
      const line = el("div", "payout", null, parent);
      if (p < players) dot(line, p);
      el("span", null, who(p) + " takes " + note(n), line);
    }
    if (e.leaving.length) el("div", "leaving", e.leaving.map(note).join(" ") + " leave" +
                             (e.leaving.length === 1 ? "s" : ""), parent);
    if (!e.payouts.length && !e.leaving.length) el("div", "leaving", "nothing to pay", parent);
  }

  function drawCurrent(e, k) {
    rollBox.replaceChildren();
    if (!e) {
      el("div", "note", "Press → (or ▶) to step through the game, event by event.", rollBox);
      return;
    }
    const d = decisionOf[k - 1];
    if (e.type === "roll" || e.type === "place") {
      const roll = e.type === "roll" ? e : events[k - 2];
      const line = el("div", "roll-line", null, rollBox);
      dot(line, e.seat);
      el("b", null, who(e.seat), line);
      el("span", null, e.type === "roll" ? " rolls" : " rolled", line);
      const faces = el("div", "roll-faces", null, rollBox);
      if (roll && roll.type === "roll") {
        const chosen = e.type === "place" ? e.value : null;
        const mark = (node, face) => { if (chosen !== null) node.classList.add(face === chosen ? "chosen" : "dim"); };
        for (const f of roll.own) mark(die(faces, "own face", COLOURS[e.seat % 8], f), f);
        for (const f of roll.big) mark(die(faces, "big face", COLOURS[e.seat % 8], f), f);
        for (const f of roll.neutral) mark(die(faces, "neutral face " + neutralKind, null, f), f);
      }
      if (e.type === "place") {
        const choice = el("div", "choice", null, rollBox);
        el("span", null, describePlace(e), choice);
        decisionNotes(choice, d);
      }
    } else {
      const text = e.type === "score" ? describeScore(e)
        : e.type === "round" ? "Round " + (e.round + 1) + " begins: the casinos are funded; " + who(e.start_seat) + " starts."
        : e.type === "preroll" ? "White dice pre-rolled onto casinos " + e.faces.join(", ")
        : "Game over.";
      el("div", "event-text", text, rollBox);
    }
  }

  function drawStandings(s) {
    standings.replaceChildren();
    if (!s.end) return;
    el("h2", null, "Final standings", standings);
    const table = el("table", "data compact", null, el("div", "scroll", null, standings));
    const head = el("tr", null, null, el("thead", null, null, table));
    for (const h of ["place", "bot", "money", "notes", "strikes"]) el("th", null, h, head);
    const body = el("tbody", null, null, table);
    const places = data.places || s.end.places;
    const order = [...Array(players).keys()].sort((a, b) => places[a] - places[b] || a - b);
    const forfeited = new Set(forfeits.map((f) => f && f.seat));
    for (const p of order) {
      const row = el("tr", "standing", null, body);
      row.dataset.seat = p;
      el("td", null, places[p], row);
      const cell = el("td", null, null, row);
      dot(cell, p);
      el("span", null, names[p] + (forfeited.has(p) ? " (forfeited)" : ""), cell);
      el("td", "final-money", dollars(s.end.money[p]), row);
      el("td", null, s.end.notes[p], row);
      const strikes = strikeCounts[p] ? Object.values(strikeCounts[p]).reduce((a, b) => a + b, 0) : 0;
      el("td", null, strikes, row);
    }
  }

  // ---- stepping ---------------------------------------------------------------------------
  let step = 0;
  let timer = null;
  function go(k) {
    const before = step;
    step = Math.max(0, Math.min(events.length, k));
    draw(step);
    if (step === events.length) {
      pause();
      if (before !== step) inView(standings);
    }
  }
  // Scroll `node` into view below the sticky controls, unless it is in view already.
  function inView(node) {
    const box = node.getBoundingClientRect();
    const top = controls.getBoundingClientRect().bottom;
    if (box.top < top || box.bottom > window.innerHeight) {
      window.scrollBy(0, box.top - top - 8);
    }
  }
  function play() {
    if (step === events.length) go(0);
    buttons.play.textContent = "⏸ pause";
    timer = setInterval(() => go(step + 1), Number(speed.value));
  }
  function pause() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    buttons.play.textContent = "▶ play";
  }
  buttons.first.addEventListener("click", () => go(0));
  buttons.prev.addEventListener("click", () => go(step - 1));
  buttons.next.addEventListener("click", () => go(step + 1));
  buttons.last.addEventListener("click", () => go(events.length));
  buttons.play.addEventListener("click", () => (timer === null ? play() : pause()));
  speed.addEventListener("change", () => { if (timer !== null) { pause(); play(); } });
  slider.addEventListener("input", () => go(Number(slider.value)));
  if (signal) signal.addEventListener("abort", pause);
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLSelectElement || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key === "ArrowRight") { ev.preventDefault(); go(step + 1); }
    else if (ev.key === "ArrowLeft") { ev.preventDefault(); go(step - 1); }
    else if (ev.key === "Home") { ev.preventDefault(); go(0); }
    else if (ev.key === "End") { ev.preventDefault(); go(events.length); }
    else if (ev.key === " ") { ev.preventDefault(); timer === null ? play() : pause(); }
  }, {signal});
  // The page carries the game's record as stored: offer it as a file too.
  const rawLink = document.getElementById("raw-record");
  if (rawLink) {
    rawLink.href = URL.createObjectURL(new Blob([recordText], {type: "application/json"}));
  }
  // A replay opens on the first funded board: round 1 with its banknotes dealt (and any
  // neutral dice pre-rolled), not the empty table before it.
  let opening = events.findIndex((e) => e.type === "round") + 1;
  while (opening > 0 && opening < events.length && events[opening].type === "preroll") opening += 1;
  // #event-K opens after the first K events; #move=N (the club's links to a strike) on the
  // N-th move (placement, from 1) of the game, as the current event.
  function fromHash() {
    const event = /^#event-(\d+)$/.exec(location.hash);
    if (event) return Number(event[1]);
    const move = /^#move=(\d+)$/.exec(location.hash);
    if (move && Number(move[1]) >= 1 && Number(move[1]) <= placeEvents.length) {
      return placeEvents[Number(move[1]) - 1] + 1;
    }
    return null;
  }
  window.addEventListener("hashchange", () => { const k = fromHash(); if (k !== null) go(k); },
                          {signal});
  step = -1;
  const start = fromHash();
  go(start === null ? opening : start);

  // A game in play (the club's live page, data-live): watch.js sends each step's events and
  // decision as a "live-step" event; the viewer follows the newest unless the reader stepped
  // back to look at an earlier one.
  if (root.dataset.live) {
    root.addEventListener("live-step", (ev) => {
      const following = step === events.length;
      for (const e of ev.detail.events) {
        const i = events.length;
        events.push(e);
        if (e.type === "place") {
          decisions.push(ev.detail.decision || null);
          decisionOf[i] = decisions[decisions.length - 1];
          placeEvents.push(i);
        }
        entries.push(logEntry(e, i));
      }
      slider.max = events.length;
      if (following) step = events.length;   // drawn without go's scrolling to the end
      draw(step);
    });
  }
};

if (document.getElementById("record") && document.getElementById("viewer")) {
  window.startViewer(document.getElementById("viewer"),
                     document.getElementById("record").textContent);
}
