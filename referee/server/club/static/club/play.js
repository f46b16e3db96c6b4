// A game in the browser (templates/club/play.html, views/browsergames.py): polls the game's state,
// draws the board, the roll, the choices as buttons and the steps so far, and posts the
// player's choice. Everything from the server is set as text, never as HTML.
(function () {
  "use strict";
  const root = document.getElementById("play");
  if (!root) { return; }
  const stateUrl = root.dataset.stateUrl;
  const player = root.dataset.player === "1";
  const form = document.getElementById("choices");
  const buttons = document.getElementById("choice-buttons");
  const status = document.getElementById("play-status");
  const message = document.getElementById("play-message");
  const steps = document.getElementById("steps");
  let seen = 0;          // steps drawn so far
  let asked = null;      // the number of the question the buttons answer

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }

  function drawRoll(q) {
    const roll = document.getElementById("roll");
    roll.replaceChildren();
    if (!q) { return; }
    roll.append(el("span", "Your roll: "));
    q.roll.forEach(function (d) { roll.append(el("span", d, "die")); });
    q.big.forEach(function (d) { roll.append(el("span", d, "die big")); });
    q.neutral.forEach(function (d) { roll.append(el("span", d, "die neutral")); });
  }

  function drawChoices(q) {
    if (q && q.number === asked) { return; }   // the same question: keep its buttons
    asked = q ? q.number : null;
    buttons.replaceChildren();
    form.elements.number.value = q ? q.number : "";
    drawRoll(q);
    if (!q) { return; }
    q.choices.forEach(function (choice, index) {
      const button = el("button", choice.label);
      button.type = "submit";
      button.name = "choice";
      button.value = String(index);
      button.className = "choice";
      if (choice.notes) { button.append(el("span", choice.notes, "notes")); }
      buttons.append(button);
    });
    message.textContent = "";
    message.className = "hint";
  }

  function drawBoard(board) {
    if (!board || !board.casinos) { return; }
    document.getElementById("board-round").textContent = "round " + board.round;
    const casinos = document.getElementById("casinos");
    casinos.replaceChildren();
    board.casinos.forEach(function (c) {
      const box = el("div", null, "casino");
      box.append(el("h3", c.name));
      c.notes.forEach(function (n) { box.append(el("span", n, "note")); });
      const list = el("ul");
      c.dice.forEach(function (d) {
        const name = board.seats[d.seat] ? board.seats[d.seat].name : "seat " + d.seat;
        list.append(el("li", (d.seat === 0 ? "you" : name) + ": " + d.count));
      });
      if (c.neutral) { list.append(el("li", "neutral: " + c.neutral)); }
      box.append(list);
      casinos.append(box);
    });
    const body = document.querySelector("#seats-now tbody");
    body.replaceChildren();
    board.seats.forEach(function (s) {
      const row = el("tr");
      row.append(el("td", s.seat === 0 ? s.name + " (you)" : s.name), el("td", s.money),
                 el("td", s.notes), el("td", s.dice + (s.big ? " + " + s.big + " big" : "")));
      body.append(row);
    });
  }

  function drawSteps(data) {
    if (data.steps_from !== seen) { return; }   // an answer to an older poll
    data.steps.forEach(function (line) {
      let cls = "";
      if (line.indexOf(" pays ") >= 0 || line.indexOf("; pays") >= 0) { cls = "payout"; }
      if (line.indexOf("(seat 0)") >= 0) { cls += " you"; }
      steps.append(el("li", line, cls.trim()));
    });
    if (data.steps.length) { steps.scrollTop = steps.scrollHeight; }
    seen = data.steps_total;
  }

  function draw(data) {
    const state = document.getElementById("play-state");
    state.textContent = data.state;
    state.className = "state-" + data.state;
    if (data.state === "done" || data.state === "failed") {
      window.location.reload();   // the page then shows the replay (or why there is none)
      return false;
    }
    drawSteps(data);
    drawBoard(data.board);
    if (data.limits) {
      document.getElementById("play-limits").textContent = "Your time: " + data.limits + ".";
    }
    const q = player ? data.question : null;
    drawChoices(q);
    if (data.state === "queued") {
      status.textContent = "Waiting for the season runner to start the game…";
    } else if (q) {
      status.textContent = "Your move " + q.number + ": choose where your dice go.";
    } else {
      status.textContent = "Waiting for the other seats…";
    }
    return true;
  }

  function poll() {
    fetch(stateUrl + "?since=" + seen, {headers: {"Accept": "application/json"},
                                        credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
      .then(function (data) { if (draw(data)) { window.setTimeout(poll, 500); } })
      .catch(function () { window.setTimeout(poll, 2000); });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const choice = event.submitter;
    if (!choice || choice.name !== "choice" || choice.disabled) { return; }
    const number = asked;   // the question these buttons answer
    const body = new FormData(form);
    body.append("choice", choice.value);
    Array.from(buttons.children).forEach(function (b) { b.disabled = true; });
    fetch(form.action, {method: "POST", body: body, credentials: "same-origin",
                        headers: {"Accept": "application/json"}})
      .then(function (r) { return r.json(); })
      .then(function (answer) {
        // A poll may have drawn the next question already: leave its buttons alone.
        if (asked !== number) { return; }
        message.textContent = answer.message;
        message.className = answer.ok ? "hint" : "bad";
        if (answer.ok) {
          buttons.replaceChildren();
          drawRoll(null);
          status.textContent = "Waiting for the other seats…";
        } else {
          asked = null;   // draw the question the server asks now afresh
        }
      })
      .catch(function () {
        if (asked !== number) { return; }
        message.textContent = "the move was not sent; try again";
        message.className = "bad";
        asked = null;
      });
  });

  poll();
}());
